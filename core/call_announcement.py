"""The entry a line posts into its announcing chat when one of its calls ends.

spec: telephony.md "Line" — ``deliver_group_chat_id``: a chat of the line's own account
that calls are announced into; a null stops announcing. The entry says who called,
when, and the outcome; each message taken and each appointment booked on the call;
and the call's page, so that staff reading the chat can open the transcript (a link
from ``server.public_url`` when it is set, else the console's relative path).

Only what the caller said into the service's own records is quoted, each piece
bounded, so a long message cannot flood the chat.
"""

from __future__ import annotations

__all__ = ["BookedAppointment", "CallSummary", "TakenMessage", "announcement", "call_link"]

import datetime as dt

from .records import frozen

#: Each quoted piece (a name, a subject, a message) is cut to this many characters.
MAX_PIECE = 200
WITHHELD = "number withheld"


@frozen
class TakenMessage:
    caller_name: str | None
    subject: str
    message: str


@frozen
class BookedAppointment:
    reference: str
    starts_at: dt.datetime
    caller_name: str
    subject: str


@frozen
class CallSummary:
    call_id: str
    caller: str  #: the caller's number, '' when withheld
    line: str
    started_at: dt.datetime
    outcome: str
    messages: tuple[TakenMessage, ...] = ()
    appointments: tuple[BookedAppointment, ...] = ()


def call_link(public_url: str | None, call_id: str) -> str:
    """The call's page in the console: absolute under ``public_url``, else relative."""
    path = f"/calls/{call_id}"
    base = (public_url or "").strip().rstrip("/")
    return base + path if base else path


def _piece(text: str | None) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= MAX_PIECE else flat[:MAX_PIECE - 1] + "…"


def _when(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def announcement(summary: CallSummary, link: str) -> str:
    """The text of the entry."""
    caller = _piece(summary.caller) or WITHHELD
    lines = [f"Call from {caller} to {summary.line} at {_when(summary.started_at)}: "
             f"{summary.outcome.replace('_', ' ')}."]
    for taken in summary.messages:
        name = _piece(taken.caller_name) or caller
        lines.append(f"Message taken from {name}: {_piece(taken.subject)} — "
                     f"{_piece(taken.message)}")
    for booked in summary.appointments:
        lines.append(f"Appointment booked: {booked.reference}, {_when(booked.starts_at)}, "
                     f"{_piece(booked.caller_name)} — {_piece(booked.subject)}")
    lines.append(link)
    return "\n".join(lines)
