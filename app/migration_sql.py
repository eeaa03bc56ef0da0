"""Helper for migrations written as SQL: run statements inside the migration's transaction.

Our migrations are hand-written SQL inside Piccolo's migration runner, because the
constraints svc relies on (exclusion constraints, partial and GIN indexes, triggers)
are beyond what auto-generated migrations express. Piccolo wraps each migration in a
transaction; the statements run on its connection, so a failing migration leaves
nothing half-applied.
"""

from typing import Awaitable, Callable

from piccolo.engine import engine_finder


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
