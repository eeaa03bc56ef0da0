"""Piccolo configuration: one engine for the process and the single Piccolo app.

The engine's DSN is set at start by ``app.db.use_database`` (embedded server or
``database.url``); Piccolo's migration runner and every table find it here.
"""

from piccolo.conf.apps import AppRegistry
from piccolo.engine.postgres import PostgresEngine


class Engine(PostgresEngine):
    """Piccolo's engine, minus the version probe its constructor runs: at import time
    no server has been chosen yet, and svc checks what it needs when it connects."""

    async def check_version(self) -> None:
        return None


DB = Engine(config={"dsn": "postgresql:///svc-not-configured"}, extensions=())

APP_REGISTRY = AppRegistry(apps=["app.piccolo_app"])
