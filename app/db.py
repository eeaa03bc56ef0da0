"""The database connection: which server, the pool, migrations.

One Piccolo engine serves the process (``app.piccolo_conf.DB``). ``use_database`` points
it at a DSN; the pool opens and closes in the application's lifecycle hooks.

Beside it, a small pool for the single statements every ``/v1`` request runs — the key
lookup, the per-key request counter, usage rows (``fast_connection``). They keep no
session state, so a connection goes back to the pool without the reset round trip
asyncpg otherwise makes; and their commits do not wait for the disk
(``synchronous_commit`` off): on a busy disk a flush costs ~10 ms, ten times the whole
rest of a passthrough call. A crash can lose the last fraction of a second of counts
and usage rows, never consistency, and never anything written through the main pool.

Piccolo or raw SQL — the rule:

* **Piccolo's query builder** (``Table.select/insert/update/delete/exists``) for the
  rows of one table read or written by key or by a plain filter: the table class checks
  the column names and the query reads as Python.
* **Raw SQL on** ``connection()`` (asyncpg, ``$1`` placeholders) for what the builder
  cannot say or hides: row locks (``FOR UPDATE``, ``SKIP LOCKED``), compare-and-set
  updates, ``ON CONFLICT`` upserts, ``DISTINCT ON``, aggregates, joins, row-value
  cursors, a constraint's violation to catch, and statements that must share one
  transaction. Where a module needs raw SQL for a table, it keeps every statement on
  that table raw, one style per table. Filtered, paged listings are written by
  ``app.services.listing.listing_query``.
* Raw SQL is written one way: not ``Table.raw(...)``, whose ``{}`` placeholders are a
  second dialect of it.
* Values are always parameters, never formatted into the text; only column lists and
  fragments fixed in the code are.
* ``fast_connection()`` only for the single statements of the ``/v1`` hot path.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os

os.environ.setdefault("PICCOLO_CONF", "app.piccolo_conf")

import asyncpg  # noqa: E402
from piccolo.apps.migrations.commands.forwards import run_forwards  # noqa: E402
from piccolo.apps.migrations.tables import Migration  # noqa: E402

from app.piccolo_conf import DB  # noqa: E402

log = logging.getLogger("svc.db")


#: What a query meets while PostgreSQL is stopped, restarting or out of reach: the
#: connection refused or gone, the server shutting down or not yet accepting. The
#: service answers these with 503 (try again), not 500, and fails closed where a
#: decision needed the database. ``InternalClientError`` is a connection the server
#: dropped mid-answer (its last reply never came) taken from a pool before the loss
#: was noticed; the next attempt gets a fresh one.
UNAVAILABLE_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError, asyncpg.OperatorInterventionError,
    asyncpg.InterfaceError, asyncpg.InternalClientError, OSError, TimeoutError)


def is_unavailable(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) says the database could not be reached."""
    seen = 0
    while error is not None and seen < 5:
        if isinstance(error, UNAVAILABLE_ERRORS):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


class MigrationFailed(Exception):
    """Migrations did not apply; the database was left as it was before."""


def use_database(dsn: str) -> None:
    """Point the engine at ``dsn``. Close the pool first if one is open."""
    assert DB.pool is None, "close the pool before switching databases"
    DB.config = {"dsn": dsn}


def current_dsn() -> str:
    return DB.config["dsn"]


_fast: asyncpg.Pool | None = None


async def _keep_session(connection: asyncpg.Connection) -> None:
    """Nothing to reset: fast statements leave no session state (an open transaction
    is still rolled back by asyncpg itself)."""


async def open_pool(max_size: int = 20) -> None:
    global _fast
    await DB.start_connection_pool(min_size=1, max_size=max_size)
    _fast = await asyncpg.create_pool(
        current_dsn(), min_size=1, max_size=max(2, max_size // 2), reset=_keep_session,
        server_settings={"synchronous_commit": "off"})


async def close_pool() -> None:
    global _fast
    if _fast is not None:
        await _fast.close()
        _fast = None
    if DB.pool is not None:
        await DB.close_connection_pool()
        DB.pool = None


async def migrate() -> None:
    """Apply every migration not yet applied, and log how many ran.

    Piccolo prints its progress; those lines go to the debug log (to the error log when
    a migration fails), since its count of migrations "already complete" is the count
    of all there are, so a first start would read as if everything ran twice."""
    before = await _applied()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = await run_forwards(app_name="svc")
    level = logging.DEBUG if result.success else logging.ERROR
    for line in printed.getvalue().splitlines():
        if line.strip():
            log.log(level, "migrate: %s", line.strip())
    if not result.success:
        raise MigrationFailed(result.message or "migrations failed")
    after = await _applied()
    log.info("migrations: %d applied now, %d in all", after - before, after)


async def _applied() -> int:
    """How many of svc's migrations the database has run (none before the first)."""
    if not await Migration.table_exists():
        return 0
    return await Migration.count().where(Migration.app_name == "svc")


async def tables_present(tables: list[tuple[str, str]]) -> list[str]:
    """Which of ``tables`` (``(schema, name)`` pairs) the database already has, as
    ``schema.name``: a restore is refused over any of them."""
    async with connection() as connected:
        rows = await connected.fetch(
            "SELECT t.schema || '.' || t.name AS name"
            " FROM unnest($1::text[], $2::text[]) AS t(schema, name)"
            " WHERE to_regclass(format('%I.%I', t.schema, t.name)) IS NOT NULL"
            " ORDER BY name",
            [schema for schema, _ in tables], [name for _, name in tables])
    return [row["name"] for row in rows]


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


@contextlib.asynccontextmanager
async def fast_connection():
    """A connection for one short statement of the ``/v1`` hot path, with no session
    state and commits that return before the disk flush (see the module's docstring);
    without the pool, an ordinary connection."""
    if _fast is None:
        async with connection() as ordinary:
            yield ordinary
    else:
        async with _fast.acquire() as pooled:
            try:
                yield pooled
            except BaseException:
                # Without the reset, a statement cut short (the server went away, the
                # task was cancelled) could leave the connection mid-operation for the
                # next caller: close it instead; the pool opens a new one.
                pooled.terminate()
                raise
