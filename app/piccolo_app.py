"""The Piccolo app of svc: its tables and its migrations folder."""

from pathlib import Path

from piccolo.conf.apps import AppConfig

from app.tables import ALL_TABLES

APP_CONFIG = AppConfig(
    app_name="svc",
    migrations_folder_path=str(Path(__file__).parent / "piccolo_migrations"),
    table_classes=list(ALL_TABLES),
    migration_dependencies=[],
    commands=[],
)
