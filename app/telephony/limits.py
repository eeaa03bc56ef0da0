"""The call limits and the tickets, kept in PostgreSQL so they hold across server
processes.

* Admission (:func:`admit`): one short transaction under a transaction-scoped
  advisory lock. It ends calls whose ticket was never redeemed in time (``no_media``,
  so an abandoned call does not hold a place under the cap), reads the three
  counters, records the ring, and inserts the call only when
  ``core.refusals.refusal_by_limits`` allows it. Two processes admitting at once
  serialise on the lock, so the cap cannot be overshot. A call turned away by the cap
  is logged as ended ``line_full``, so the operator sees in the call log the callers
  a full line missed (other refusals stay in the audit trail only: the caller rang
  too often, or the line took too many calls in a minute).
* Signature failures (:func:`signature_failures`, :func:`record_signature_failure`):
  per source address over the last minute; one statement each.
* Tickets (:class:`TicketStore`): spec: telephony.md "Pbx ticket" — a ticket is minted
  only by an answer that passed every check, lives 30 seconds and is redeemed exactly
  once; anything else presented is rejected. The lifecycle is ``core.tickets``; the
  store keeps it atomic in SQL: :meth:`TicketStore.redeem` is one ``UPDATE … WHERE
  redeemed_at IS NULL AND issued_at > now() - 30 s RETURNING``, so two connections
  presenting one ticket at once, on two server processes, cannot both win. The
  database clock decides the lifetime, so the clocks of several hosts do not matter.

Who calls the tickets: the carrier voice webhook and the pbx answer request call
:meth:`TicketStore.issue` for an admitted call (a random token for the carrier; UUID
text for pbx, because an AudioSocket connection presents a 16-byte UUID); the media
WebSocket (the ``ticket`` stream parameter) and the AudioSocket listener
(``str(UUID(bytes=identifier))``) call ``Telephony.redeem`` and close the connection
without a word when it returns None.

spec: telephony.md "Limits" — calls at once, 5 in 5 minutes per number (a withheld
number is nobody's: not counted, ``core.withheld_numbers``), 60 a minute per line, 30 signature failures a minute per address, tickets 30 seconds and once.
"""

from __future__ import annotations

import secrets
import time
import uuid
from uuid import UUID

from app import db
from core.call_outcome import CallInput, CallOutcome, transition
from core.records import frozen
from core.refusals import LimitCounts, Limits, RefusalReason, refusal_by_limits
from core.tickets import TICKET_LIFETIME_SECONDS, issue_ticket
from core.withheld_numbers import is_withheld

# A fixed name: every process takes the same lock for admission.
ADMISSION_LOCK = "svc.telephony.admission"
SIGNATURE_FAILURES_PER_MINUTE = 30

# spec: call_outcome — "no connection presented the ticket within its deadline".
_NO_MEDIA = transition(CallOutcome.IN_PROGRESS, CallInput.NO_MEDIA)[1].value
_LINE_FULL = transition(CallOutcome.IN_PROGRESS, CallInput.LINE_FULL)[1].value

_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))"
_EXPIRE_UNCONNECTED = """
UPDATE telephony_call SET outcome = $1, ended_at = now()
WHERE outcome = 'in_progress' AND media_started_at IS NULL
  AND started_at < now() - make_interval(secs => $2)
"""
_SAME_CARRIER_CALL = """
SELECT id, outcome FROM telephony_call
WHERE carrier_call_sid = $1 AND outcome IN ('in_progress', 'line_full')
"""
_FORGET_RINGS = "DELETE FROM telephony_ring WHERE at < now() - make_interval(secs => $1)"
_RINGS_FROM = """
SELECT count(*) FROM telephony_ring
WHERE from_number = $1 AND at > now() - make_interval(secs => $2)
"""
_CALLS_TO = """
SELECT count(*) FROM telephony_call
WHERE number_id = $1 AND started_at > now() - make_interval(secs => $2)
  AND outcome <> 'line_full'
"""
_IN_PROGRESS = "SELECT count(*) FROM telephony_call WHERE outcome = 'in_progress'"
_RING = "INSERT INTO telephony_ring (from_number) VALUES ($1)"
# $8: the outcome, in progress or already final (then it ended as it started). The
# call keeps the line's retention periods as they are now: they outlive the line.
_INSERT_CALL = """
INSERT INTO telephony_call (number_id, e164, from_number, provider, carrier_call_sid,
                            owner_id, agent_id, outcome, ended_at,
                            transcript_days, log_days, recording_days)
SELECT $1, $2, $3, $4, $5, $6, $7, $8::text,
       CASE WHEN $8::text = 'in_progress' THEN NULL ELSE now() END,
       coalesce(l.transcript_days, 0), coalesce(l.log_days, 0), coalesce(l.recording_days, 0)
FROM (SELECT 1) AS one LEFT JOIN telephony_line l ON l.id = $1
RETURNING id
"""
_FAILURES = """
SELECT count(*) FROM telephony_signature_failure
WHERE address = $1 AND at > now() - interval '1 minute'
"""
_RECORD_FAILURE = """
WITH forgotten AS (
    DELETE FROM telephony_signature_failure WHERE at < now() - interval '10 minutes'
)
INSERT INTO telephony_signature_failure (address) VALUES ($1)
"""


@frozen
class NewCall:
    """A call every rule but the limits allowed, ready to be recorded."""

    number_id: UUID
    e164: str
    from_number: str
    provider: str
    owner_id: UUID
    agent_id: UUID
    carrier_call_sid: str | None = None


@frozen
class Admission:
    """The call id when admitted, else the limit that refused it (with the id of its
    call log entry when the cap refused it)."""

    call_id: UUID | None
    refusal: RefusalReason | None
    #: The carrier already had this call admitted (same ``CallSid``): a retry or a replay.
    repeated: bool = False


async def _rings_from(connection, call: NewCall, limits: Limits) -> int:
    # A withheld number is every withheld caller at once, not one caller: it is not
    # counted; such calls are bounded by the line's rate and the cap alone.
    if is_withheld(call.from_number):
        return 0
    return await connection.fetchval(_RINGS_FROM, call.from_number,
                                     float(limits.from_window_seconds))


async def _counts(connection, call: NewCall, limits: Limits) -> LimitCounts:
    return LimitCounts(
        rings_from_caller=await _rings_from(connection, call, limits),
        calls_to_line=await connection.fetchval(
            _CALLS_TO, call.number_id, float(limits.to_window_seconds)),
        calls_in_progress=await connection.fetchval(_IN_PROGRESS),
    )


async def admit(call: NewCall, limits: Limits) -> Admission:
    """Count this ring and record the call if no limit refuses it (atomic)."""
    async with db.connection() as connection, connection.transaction():
        await connection.execute(_LOCK, ADMISSION_LOCK)
        if call.carrier_call_sid is not None:
            # A carrier retrying the same webhook gets the call it already has.
            # (And one the cap turned away is turned away again, not logged twice.)
            same = await connection.fetchrow(_SAME_CARRIER_CALL, call.carrier_call_sid)
            if same is not None:
                full = same["outcome"] == _LINE_FULL
                return Admission(same["id"], RefusalReason.CONCURRENCY if full else None,
                                 repeated=True)
        await connection.execute(_EXPIRE_UNCONNECTED, _NO_MEDIA, TICKET_LIFETIME_SECONDS)
        await connection.execute(_FORGET_RINGS, float(limits.from_window_seconds))
        counts = await _counts(connection, call, limits)
        # The ring counts whether or not the call is taken: "that number rang".
        if not is_withheld(call.from_number):
            await connection.execute(_RING, call.from_number)
        refusal = refusal_by_limits(counts, limits)
        if refusal is not None and refusal is not RefusalReason.CONCURRENCY:
            return Admission(None, refusal)
        outcome = _LINE_FULL if refusal is not None else CallOutcome.IN_PROGRESS.value
        call_id = await connection.fetchval(
            _INSERT_CALL, call.number_id, call.e164, call.from_number, call.provider,
            call.carrier_call_sid, call.owner_id, call.agent_id, outcome)
        return Admission(call_id, refusal)


async def signature_failures(address: str) -> int:
    """Failed carrier signatures from ``address`` in the last minute."""
    async with db.connection() as connection:
        return await connection.fetchval(_FAILURES, address)


async def record_signature_failure(address: str) -> None:
    async with db.connection() as connection:
        await connection.execute(_RECORD_FAILURE, address)


# -- tickets

_ISSUE = """
WITH forgotten AS (
    DELETE FROM telephony_ticket WHERE issued_at < now() - interval '1 day'
)
INSERT INTO telephony_ticket (token, call_id) VALUES ($1, $2)
"""

# spec: telephony.md "Pbx ticket" — valid -> redeemed only within 30 s, first use; the
# call must still be in progress (a call the carrier already ended takes no audio), and
# its media not started: one call, one audio stream, whatever tickets exist for it. The
# row lock of the UPDATE makes a second connection wait for the first and then find
# ``media_started_at`` set, on any server process.
# $3: the redeeming process, which runs the call's audio from now on (its owner,
# ``app.telephony.leases``).
_REDEEM = """
WITH ticket AS (
    UPDATE telephony_ticket SET redeemed_at = now()
    WHERE token = $1 AND redeemed_at IS NULL
      AND issued_at > now() - make_interval(secs => $2)
    RETURNING call_id
)
UPDATE telephony_call AS c SET media_started_at = now(), owner_instance = $3
FROM ticket
WHERE c.id = ticket.call_id AND c.outcome = 'in_progress' AND c.media_started_at IS NULL
RETURNING c.id, c.number_id, c.e164, c.from_number, c.provider, c.owner_id, c.agent_id
"""


# The ticket a call was answered with, while it can still admit the call's one stream.
_LIVE_TICKET = """
SELECT t.token FROM telephony_ticket t JOIN telephony_call c ON c.id = t.call_id
WHERE t.call_id = $1 AND t.redeemed_at IS NULL
  AND t.issued_at > now() - make_interval(secs => $2)
  AND c.outcome = 'in_progress' AND c.media_started_at IS NULL
ORDER BY t.issued_at LIMIT 1
"""


@frozen
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
    def __init__(self, owner: UUID | None = None) -> None:
        #: The instance id of this process's call lease, named on each redeemed call.
        self.owner = owner

    async def issue(self, call_id: UUID, token: str) -> str:
        """Store a valid ticket for ``call_id``; raises when the store is unreachable."""
        ticket = issue_ticket(token, time.time())
        async with db.connection() as connection:
            await connection.execute(_ISSUE, ticket.token, call_id)
        return ticket.token

    async def live(self, call_id: UUID) -> str | None:
        """The call's unspent ticket still in its lifetime, if any; never a new one."""
        async with db.connection() as connection:
            return await connection.fetchval(_LIVE_TICKET, call_id, TICKET_LIFETIME_SECONDS)

    async def redeem(self, token: str) -> RedeemedCall | None:
        """The call the ticket admits to, once; None for anything else."""
        if not token or len(token) > 200:
            return None
        async with db.connection() as connection:
            row = await connection.fetchrow(_REDEEM, token, TICKET_LIFETIME_SECONDS,
                                            self.owner)
        if row is None:
            return None
        return RedeemedCall(row["id"], row["number_id"], row["e164"], row["from_number"],
                            row["provider"], row["owner_id"], row["agent_id"])
