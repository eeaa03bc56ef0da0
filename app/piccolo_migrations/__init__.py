"""The database's migrations: one module per step, each a list of SQL statements
(``app.migration_sql``), applied in order by ``app.db.migrate``.

A migration, once written, is history: an installed database has run it. A change to
the schema is a new module, never an edit of an old one; the SQL each module runs is
pinned in ``tests/app/test_migration_sql.py``, where a new module adds its line."""
