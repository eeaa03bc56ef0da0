"""Helpers for migrations written as SQL: run statements inside the migration's transaction.

Our migrations are hand-written SQL inside Piccolo's migration runner, because the
constraints svc relies on (exclusion constraints, partial and GIN indexes, triggers)
are beyond what auto-generated migrations express. Piccolo wraps each migration in a
transaction; the statements run on its connection, so a failing migration leaves
nothing half-applied.
"""

from typing import Awaitable, Callable

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder

# The columns most tables begin or end with, written once, as the table classes share
# theirs (``AccountOwned``, ``Created``, ``Stamped``). A migration places one as
# ``{UUID_KEY},`` in an f-string, where a brace the SQL itself needs is doubled
# (``'{{}}'``). They are part of every migration that names them, so they never
# change: ``tests/app/test_migration_sql.py`` pins each migration's SQL.
UUID_KEY = "id uuid PRIMARY KEY DEFAULT gen_random_uuid()"
ACCOUNT_ID = "account_id uuid NOT NULL REFERENCES account (id) ON DELETE CASCADE"
CREATED_AT = "created_at timestamptz NOT NULL DEFAULT now()"
UPDATED_AT = "updated_at timestamptz NOT NULL DEFAULT now()"


def sql_step(statements: list[str]) -> Callable[[], Awaitable[None]]:
    """A coroutine function for ``MigrationManager.add_raw`` running ``statements``."""

    async def run() -> None:
        engine = engine_finder()
        transaction = engine.current_transaction.get()
        for statement in statements:
            if transaction is not None:
                await transaction.connection.execute(statement)
            else:
                await engine._run_in_new_connection(statement)

    return run


def sql_migration(
    migration_id: str, description: str, statements: list[str]
) -> Callable[[], Awaitable[MigrationManager]]:
    """A migration module's ``forwards``: one step running ``statements`` in order.

    Piccolo imports each migration module, reads its ``ID``, ``VERSION`` and
    ``DESCRIPTION``, and awaits its ``forwards()`` for the manager to run; every
    migration of ours is that one manager around its list of statements.
    """

    async def forwards() -> MigrationManager:
        manager = MigrationManager(
            migration_id=migration_id, app_name="svc", description=description
        )
        manager.add_raw(sql_step(statements))
        return manager

    return forwards
