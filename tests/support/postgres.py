"""The PostgreSQL server of a test run: embedded by default, or an external one."""

from __future__ import annotations

import asyncio
import itertools
import os
from concurrent.futures import Future, ThreadPoolExecutor
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

    async def create_empty(self, name: str) -> str:
        """A new database with nothing in it, not even svc's migrations."""
        await self._admin(f'CREATE DATABASE "{name}"')
        return with_database(self.admin_dsn, name)

    async def clone_template(self, name: str) -> str:
        await self._admin(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"')
        return with_database(self.admin_dsn, name)

    async def drop(self, name: str) -> None:
        await self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def databases_ahead(self) -> "DatabasesAhead":
        return DatabasesAhead(self)

    async def drop_template(self) -> None:
        if self.template:
            await self.drop(self.template)


class DatabasesAhead:
    """Fresh copies of the template, each made while the test before it runs.

    Copying the template takes a few hundred milliseconds of the server's time; made
    one test ahead, on a thread of their own, the copy is ready when the test asks, and
    a used database is dropped on that thread too, without the next test waiting.
    """

    def __init__(self, postgres: TestPostgres) -> None:
        self._postgres = postgres
        self._numbers = itertools.count()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="databases-ahead")
        self._next: Future[str] | None = None

    def _make(self) -> Future[str]:
        name = f"svc_test_{os.getpid()}_{next(self._numbers)}"
        return self._thread.submit(asyncio.run, self._postgres.clone_template(name))

    async def take(self) -> str:
        """A fresh database's address; the next one is begun at once."""
        ready = self._next or self._make()
        self._next = self._make()
        return await asyncio.wrap_future(ready)

    def give_back(self, dsn: str) -> None:
        self._thread.submit(asyncio.run, self._postgres.drop(urlsplit(dsn).path.lstrip("/")))

    def close(self) -> None:
        if self._next is not None:
            self.give_back(self._next.result())
        self._thread.shutdown(wait=True)
