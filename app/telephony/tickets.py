"""Single-use tickets admitting one audio connection to a call: minted here, redeemed
by the audio side.

spec: telephony.md "Pbx ticket" — a ticket is minted only by an answer that passed
every check, lives 30 seconds and is redeemed exactly once; anything else presented is
rejected. The lifecycle is ``core.tickets``; the store keeps it atomic in SQL:
:meth:`TicketStore.redeem` is one ``UPDATE … WHERE redeemed_at IS NULL AND issued_at >
now() - 30 s RETURNING``, so two connections presenting the same ticket at once, on
two server processes, cannot both win. The database clock decides the lifetime, so
the clocks of several hosts do not matter.

Who calls what:

* the carrier voice webhook and the pbx answer request call :meth:`issue` for an
  admitted call (a random token for the carrier; UUID text for pbx, because an
  AudioSocket connection presents a 16-byte UUID);
* the media WebSocket (the ``ticket`` stream parameter) and the AudioSocket listener
  (``str(UUID(bytes=identifier))``) call :meth:`redeem` and close the connection
  without a word when it returns None.
"""

from __future__ import annotations

import secrets
import time
import uuid
from dataclasses import dataclass
from uuid import UUID

from app import db
from core.tickets import TICKET_LIFETIME_SECONDS, issue_ticket

_ISSUE = """
WITH forgotten AS (
    DELETE FROM telephony_ticket WHERE issued_at < now() - interval '1 day'
)
INSERT INTO telephony_ticket (token, call_id) VALUES ($1, $2)
"""

# spec: telephony.md "Pbx ticket" — valid -> redeemed only within 30 s, first use; the
# call must still be in progress (a call the carrier already ended takes no audio).
_REDEEM = """
WITH ticket AS (
    UPDATE telephony_ticket SET redeemed_at = now()
    WHERE token = $1 AND redeemed_at IS NULL
      AND issued_at > now() - make_interval(secs => $2)
    RETURNING call_id
)
UPDATE telephony_call AS c SET media_started_at = now()
FROM ticket
WHERE c.id = ticket.call_id AND c.outcome = 'in_progress'
RETURNING c.id, c.number_id, c.e164, c.from_number, c.provider, c.owner_id, c.agent_id
"""


@dataclass(frozen=True, slots=True)
class RedeemedCall:
    """The call a redeemed ticket admits its connection to."""

    call_id: UUID
    number_id: UUID | None
    e164: str
    from_number: str
    provider: str
    owner_id: UUID | None
    agent_id: UUID | None


def new_carrier_token() -> str:
    return secrets.token_urlsafe(32)


def new_pbx_token() -> str:
    return str(uuid.uuid4())


class TicketStore:
    async def issue(self, call_id: UUID, token: str) -> str:
        """Store a valid ticket for ``call_id``; raises when the store is unreachable."""
        ticket = issue_ticket(token, time.time())
        async with db.connection() as connection:
            await connection.execute(_ISSUE, ticket.token, call_id)
        return ticket.token

    async def redeem(self, token: str) -> RedeemedCall | None:
        """The call the ticket admits to, once; None for anything else."""
        if not token or len(token) > 200:
            return None
        async with db.connection() as connection:
            row = await connection.fetchrow(_REDEEM, token, TICKET_LIFETIME_SECONDS)
        if row is None:
            return None
        return RedeemedCall(row["id"], row["number_id"], row["e164"], row["from_number"],
                            row["provider"], row["owner_id"], row["agent_id"])
