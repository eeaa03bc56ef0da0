"""The database's migrations: one module per step, each a list of SQL statements
(``app.migration_sql``), applied in order by ``app.db.migrate``."""
