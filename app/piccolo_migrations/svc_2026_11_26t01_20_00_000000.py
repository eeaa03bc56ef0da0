"""Each process's listener in its lease.

``telephony_lease.pbx_listen``: the address the process's AudioSocket listener bound,
null when it listens nowhere, written at every renewal. The readiness check reads the
live leases to say whether every serving process — every worker, every host — listens
where ``telephony.pbx_listen`` says, not only the process that was asked.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from app.migration_sql import sql_step

ID = "2026-11-26T01:20:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "each process's audio listener in its lease"

STATEMENTS = ["ALTER TABLE telephony_lease ADD COLUMN pbx_listen text"]


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="svc", description=DESCRIPTION)
    manager.add_raw(sql_step(STATEMENTS))
    return manager
