"""The PostgreSQL server of a test run: embedded by default, or an external one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from adapters.embedded_postgres import EmbeddedPostgres


def with_database(dsn: str, name: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path="/" + name))


@dataclass
class TestPostgres:
    admin_dsn: str
    embedded: EmbeddedPostgres | None = None
    template: str = field(default="")

    @classmethod
    def start(cls, external_url: str | None, workdir: Path) -> "TestPostgres":
        if external_url:
            return cls(admin_dsn=external_url)
        embedded = EmbeddedPostgres(workdir / "pg")
        return cls(admin_dsn=embedded.start(), embedded=embedded)

    def stop(self) -> None:
        if self.embedded is not None:
            self.embedded.stop()

    async def _admin(self, sql: str) -> None:
        connection = await asyncpg.connect(self.admin_dsn)
        try:
            await connection.execute(sql)
        finally:
            await connection.close()

    async def prepare_template(self) -> None:
        """Create and migrate the template every test database is cloned from."""
        import os

        from app import db

        if self.embedded is not None:
            # A throwaway cluster: durability buys nothing here and costs most of the
            # time of creating and dropping a database per test.
            for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
                await self._admin(f"ALTER SYSTEM SET {setting}")
            await self._admin("SELECT pg_reload_conf()")

        self.template = f"svc_template_{os.getpid()}"
        await self._admin(f'DROP DATABASE IF EXISTS "{self.template}" WITH (FORCE)')
        await self._admin(f'CREATE DATABASE "{self.template}"')
        db.use_database(with_database(self.admin_dsn, self.template))
        await db.migrate()

    async def clone_template(self, name: str) -> str:
        await self._admin(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"')
        return with_database(self.admin_dsn, name)

    async def drop(self, name: str) -> None:
        await self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    async def drop_template(self) -> None:
        if self.template:
            await self.drop(self.template)
