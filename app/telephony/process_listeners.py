"""Where every serving process listens for the telephone system's audio.

Each process writes the address its AudioSocket listener bound (or null) into its
lease at every renewal (``app.telephony.leases``); the live leases are the serving
processes. The asking process, when it serves, answers for itself from what it knows
now rather than from its last renewal, a few seconds old.
"""

from __future__ import annotations

__all__ = ["process_listeners"]

from app import db
from app.telephony.leases import CallLeases
from core.process_listeners import ProcessListener

_LIVE = """
SELECT instance_id, host, process_id, pbx_listen FROM telephony_lease
WHERE expires_at > now() ORDER BY host, process_id
"""


async def process_listeners(own: CallLeases | None = None) -> list[ProcessListener]:
    """The serving processes and their listeners; ``own`` is the asking process's
    lease when it serves (the terminal's check has none)."""
    async with db.connection() as connection:
        rows = await connection.fetch(_LIVE)
    found = [ProcessListener(row["host"], row["process_id"], row["pbx_listen"])
             for row in rows if own is None or row["instance_id"] != own.instance_id]
    if own is not None:
        found.append(own.process_listener())
    return found
