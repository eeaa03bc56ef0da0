"""The call log: reading it (``/api/admin/telephony/calls``) and moving a call's outcome.

Outcomes move only through ``core.call_outcome``: :meth:`CallLog.apply` reads the
outcome, asks the machine, and writes the target with a compare-and-set on the
outcome it read, so two processes reporting the end of one call cannot both win and
a final outcome is never overwritten. The call that reaches its final outcome here is
then told to ``on_end`` (announcing, ``app.telephony.announce``).

A page is ordered newest first; ``before`` is the opaque cursor the previous page
returned as ``next_before`` (a call's start time and id, so it survives the deletion
of the call it names). spec: telephony.md "Call log page" — default 50, maximum 200.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from collections.abc import Awaitable, Callable
from typing import Any
from uuid import UUID

from app import db
from app.errors import NotFound, Unprocessable
from app.services.access import parse_id
from app.services.listing import below, equals, listing_query, where
from app.services.views import view_of
from core.call_outcome import CallInput, CallOutcome, OutcomeEffect, OutcomeMachine
from core.errors import LocalProtocolError

DEFAULT_PAGE, MAX_PAGE = 50, 200
OUTCOMES = tuple(outcome.value for outcome in CallOutcome)
# Carrier statuses that say the call is over (Twilio's CallStatus values).
FINAL_CARRIER_STATUSES = frozenset({"completed", "busy", "failed", "no-answer", "canceled"})

_COLUMNS = """
id, number_id, e164, from_number, provider, carrier_call_sid, carrier_status, owner_id,
agent_id, chat_id, outcome, transfer_approved, recording_failed, tidied_at, started_at,
media_started_at, ended_at
"""
# A call with its line's label and its agent's name, as they are now (null once gone).
_CALLS = f"""
SELECT {_COLUMNS},
       (SELECT l.label FROM telephony_line l WHERE l.id = c.number_id) AS line_label,
       (SELECT a.name FROM agent a WHERE a.id = c.agent_id) AS agent_name
FROM telephony_call c
"""
_TURNS = """
SELECT asked_ms, first_text_ms, first_audio_ms, finished_ms FROM telephony_turn
WHERE call_id = $1 ORDER BY id
"""
#: A caller filter: digits, with a leading + when given in full.
_CALLER = re.compile(r"\+?[0-9]{1,15}")
_SET_OUTCOME = """
UPDATE telephony_call SET outcome = $2, ended_at = coalesce(ended_at, now())
WHERE id = $1 AND outcome = $3
"""
_SET_STATUS = """
UPDATE telephony_call SET carrier_status = $2 WHERE carrier_call_sid = $1
RETURNING id, outcome, media_started_at
"""


#: The call log's columns a call is shown with (``from_number`` as ``from``).
_CALL_COLUMNS = (
    "id", "number_id", "e164", "from_number", "provider", "carrier_call_sid", "carrier_status",
    "owner_id", "agent_id", "agent_name", "line_label", "chat_id", "outcome",
    "transfer_approved", "recording_failed", "tidied_at", "started_at", "media_started_at",
    "ended_at",
)


def call_view(row: dict[str, Any]) -> dict[str, Any]:
    view = view_of(row, _CALL_COLUMNS)
    view["from"] = view.pop("from_number")
    view["tidied_away"] = row["tidied_at"] is not None
    return view


def _seconds(ms: int | None) -> float | None:
    return None if ms is None else ms / 1000


def turn_view(row: dict[str, Any]) -> dict[str, Any]:
    """One answered turn, in seconds from the end of the caller's speech."""
    return {"asked_s": _seconds(row["asked_ms"]), "first_text_s": _seconds(row["first_text_ms"]),
            "first_audio_s": _seconds(row["first_audio_ms"]),
            "finished_s": _seconds(row["finished_ms"])}


def caller_filter(text: str) -> str:
    """The caller number to look for, spaces and dashes taken out; 422 unless digits."""
    digits = re.sub(r"[\s().-]", "", text)
    if not _CALLER.fullmatch(digits):
        raise Unprocessable("caller must be a telephone number or part of one: digits, "
                            "with a leading + for a whole number.", field="caller")
    return digits


def encode_cursor(row: dict[str, Any]) -> str:
    text = f"{row['started_at'].isoformat()}|{row['id']}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[dt.datetime, UUID]:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        started, _, call_id = text.partition("|")
        return dt.datetime.fromisoformat(started), UUID(call_id)
    except ValueError:
        raise Unprocessable("before must be the next_before of a previous page.",
                            field="before") from None


class CallLog:
    def __init__(self) -> None:
        #: Told of each call this log moves to a final outcome (announcing).
        self.on_end: Callable[[UUID], Awaitable[None]] | None = None

    async def page(self, *, number_id: str | None = None, outcome: str | None = None,
                   before: str | None = None, limit: int = DEFAULT_PAGE,
                   since: dt.datetime | None = None, until: dt.datetime | None = None,
                   caller: str | None = None) -> dict[str, Any]:
        """Newest first; ``since``/``until`` bound the start time (inclusive/exclusive),
        ``caller`` is a number or part of one the caller's number contains."""
        if not 1 <= limit <= MAX_PAGE:
            raise Unprocessable(f"limit must be 1 to {MAX_PAGE}.", code="out_of_range",
                                field="limit")
        line = parse_id(number_id, "line") if number_id is not None else None
        if outcome is not None and outcome not in OUTCOMES:
            raise Unprocessable(f"outcome must be one of {', '.join(OUTCOMES)}.",
                                field="outcome")
        digits = caller_filter(caller) if caller is not None else None
        page_after = (below(("started_at", "id"), decode_cursor(before))
                      if before is not None else None)
        # One row more than the page: whether it came says whether a next page exists.
        sql, args = listing_query(
            _CALLS,
            [equals("number_id", line), equals("outcome", outcome),
             None if since is None else where("started_at >= {}", since),
             None if until is None else where("started_at < {}", until),
             None if digits is None else where("strpos(from_number, {}) > 0", digits),
             page_after],
            order_by="started_at DESC, id DESC", limit=limit + 1)
        async with db.connection() as connection:
            rows = [dict(row) for row in await connection.fetch(sql, *args)]
        more = len(rows) > limit
        rows = rows[:limit]
        return {"data": [call_view(row) for row in rows],
                "next_before": encode_cursor(rows[-1]) if more else None}

    async def row(self, call_id: str | UUID) -> dict[str, Any]:
        async with db.connection() as connection:
            row = await connection.fetchrow(f"{_CALLS} WHERE id = $1",
                                            parse_id(call_id, "call"))
        if row is None:
            raise NotFound("No such call.")
        return dict(row)

    async def get(self, call_id: str | UUID) -> dict[str, Any]:
        """The call with the timings of each turn the agent answered."""
        row = await self.row(call_id)
        async with db.connection() as connection:
            turns = await connection.fetch(_TURNS, row["id"])
        return {**call_view(row), "turns": [turn_view(dict(turn)) for turn in turns]}

    async def apply(self, call_id: UUID, given: CallInput) -> CallOutcome:
        """Move the call's outcome by one input; returns the outcome it has afterwards."""
        async with db.connection() as connection:
            current = CallOutcome(await connection.fetchval(
                "SELECT outcome FROM telephony_call WHERE id = $1", call_id))
            machine = OutcomeMachine(current)
            try:
                effect = machine.process(given)
            except LocalProtocolError:
                return current  # a second decision on a decided call changes nothing
            if effect is OutcomeEffect.IGNORE:
                return current
            done = await connection.execute(_SET_OUTCOME, call_id, machine.outcome.value,
                                            current.value)
        if done.endswith(" 0"):  # another process decided first; its outcome stands
            return CallOutcome((await self.row(call_id))["outcome"])
        if machine.is_final and self.on_end is not None:
            await self.on_end(call_id)
        return machine.outcome

    async def record_carrier_status(self, call_sid: str, status: str) -> CallOutcome | None:
        """Keep the carrier's status; a final one ends a call still in progress —
        ``carrier_ended`` before media flowed, ``completed`` after (an echo when the
        audio side already decided)."""
        async with db.connection() as connection:
            row = await connection.fetchrow(_SET_STATUS, call_sid, status[:40])
        if row is None:
            return None
        if status not in FINAL_CARRIER_STATUSES:
            return CallOutcome(row["outcome"])
        given = (CallInput.CARRIER_ENDED_BEFORE_MEDIA if row["media_started_at"] is None
                 else CallInput.CALLER_HUNG_UP)
        return await self.apply(row["id"], given)

    async def transfer_number(self, call_id: UUID) -> str | None:
        """The number to put the caller through to, or None to hang up.

        Only when the audio side approved a transfer (it passed the screening gate:
        spec: telephony.md "Screening list") and the line still has a transfer number.
        The call is then recorded ``transferred``.
        """
        async with db.connection() as connection:
            number = await connection.fetchval(
                "SELECT l.transfer_e164 FROM telephony_call c "
                "JOIN telephony_line l ON l.id = c.number_id "
                "WHERE c.id = $1 AND c.transfer_approved", call_id)
        if number is None:
            return None
        if await self.apply(call_id, CallInput.TRANSFERRED) is not CallOutcome.TRANSFERRED:
            return None
        return number

    async def id_for_carrier_call(self, call_sid: str) -> UUID | None:
        async with db.connection() as connection:
            return await connection.fetchval(
                "SELECT id FROM telephony_call WHERE carrier_call_sid = $1", call_sid)

    async def id_for_ticket(self, token: str) -> UUID | None:
        async with db.connection() as connection:
            return await connection.fetchval(
                "SELECT call_id FROM telephony_ticket WHERE token = $1", token)
