"""Each process's listener in its lease.

``telephony_lease.pbx_listen``: the address the process's AudioSocket listener bound,
null when it listens nowhere, written at every renewal. The readiness check reads the
live leases to say whether every serving process — every worker, every host — listens
where ``telephony.pbx_listen`` says, not only the process that was asked.
"""

from app.migration_sql import sql_migration

ID = "2026-11-26T01:20:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "each process's audio listener in its lease"

STATEMENTS = ["ALTER TABLE telephony_lease ADD COLUMN pbx_listen text"]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
