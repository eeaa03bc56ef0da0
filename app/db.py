"""The database connection: which server, the pool, migrations.

One Piccolo engine serves the process (``app.piccolo_conf.DB``). ``use_database`` points
it at a DSN; the pool opens and closes in the application's lifecycle hooks.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os

os.environ.setdefault("PICCOLO_CONF", "app.piccolo_conf")

from piccolo.apps.migrations.commands.forwards import run_forwards  # noqa: E402

from app.piccolo_conf import DB  # noqa: E402

log = logging.getLogger("svc.db")


class MigrationFailed(Exception):
    """Migrations did not apply; the database was left as it was before."""


def use_database(dsn: str) -> None:
    """Point the engine at ``dsn``. Close the pool first if one is open."""
    assert DB.pool is None, "close the pool before switching databases"
    DB.config = {"dsn": dsn}


async def open_pool(max_size: int = 20) -> None:
    await DB.start_connection_pool(min_size=1, max_size=max_size)


async def close_pool() -> None:
    if DB.pool is not None:
        await DB.close_connection_pool()
        DB.pool = None


async def migrate() -> None:
    """Apply every migration not yet applied. Piccolo prints progress; we log it."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = await run_forwards(app_name="svc")
    for line in printed.getvalue().splitlines():
        if line.strip():
            log.info("migrate: %s", line.strip())
    if not result.success:
        raise MigrationFailed(result.message or "migrations failed")


async def ping(timeout: float = 2.0) -> bool:
    """True when the database answers a trivial query within ``timeout`` seconds."""
    if DB.pool is None:
        return False
    try:
        async with DB.pool.acquire(timeout=timeout) as connection:
            return await connection.fetchval("SELECT 1", timeout=timeout) == 1
    except Exception:  # whatever the failure, the answer is "not healthy"
        return False


@contextlib.asynccontextmanager
async def connection():
    """An asyncpg connection for SQL that Piccolo's query builder does not express
    (locks, upserts with counters); inside a Piccolo transaction, its connection."""
    transaction = DB.current_transaction.get()
    if transaction is not None:
        yield transaction.connection
    elif DB.pool is not None:
        async with DB.pool.acquire() as pooled:
            yield pooled
    else:
        single = await DB.get_new_connection()
        try:
            yield single
        finally:
            await single.close()
