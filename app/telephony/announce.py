"""Announcing: each ended call of a line with ``deliver_group_chat_id`` is posted into
that chat (spec: telephony.md "Line"; the text is ``core.call_announcement``).

:meth:`Announcements.call_ended` is told of every call that reaches its final outcome
through the call log (``CallLog.on_end``) or the lease's sweep (``CallLeases.on_end``).
It posts when the line is still registered with a chat to announce into, and the
call's transcript is kept: the call has its conversation and it was not tidied away.
A call without one (it ended before its audio, or its transcript was erased) is not
announced: the entry is a second copy of what the transcript holds, and where that is
not kept no copy is made. Announcing never fails the end of a call: an error is
logged and the call's outcome stands.
"""

from __future__ import annotations

__all__ = ["Announcements"]

import logging
from uuid import UUID

from app import db
from app.services.chats import Chats
from core.call_announcement import (
    BookedAppointment,
    CallSummary,
    TakenMessage,
    announcement,
    call_link,
)
from core.withheld_numbers import is_withheld

log = logging.getLogger("svc.telephony.announce")

_CALL = """
SELECT c.id, c.e164, c.from_number, c.outcome, c.started_at, l.deliver_group_chat_id
FROM telephony_call c
JOIN telephony_line l ON l.id = c.number_id
JOIN chat g ON g.id = l.deliver_group_chat_id
WHERE c.id = $1 AND c.outcome <> 'in_progress'
  AND c.chat_id IS NOT NULL AND c.tidied_at IS NULL
"""
_MESSAGES = """
SELECT caller_name, subject, message FROM enquiry WHERE call_id = $1 ORDER BY created_at, id
"""
_APPOINTMENTS = """
SELECT reference, starts_at, caller_name, subject FROM appointment
WHERE call_id = $1 AND state <> 'cancelled' ORDER BY starts_at, id
"""


class Announcements:
    def __init__(self, chats: Chats, public_url: str | None) -> None:
        self.chats = chats
        self.public_url = public_url

    async def _summary(self, call_id: UUID) -> tuple[CallSummary, UUID] | None:
        async with db.connection() as connection:
            call = await connection.fetchrow(_CALL, call_id)
            if call is None:
                return None
            messages = await connection.fetch(_MESSAGES, call_id)
            appointments = await connection.fetch(_APPOINTMENTS, call_id)
        caller = "" if is_withheld(call["from_number"]) else call["from_number"]
        summary = CallSummary(
            str(call["id"]), caller, call["e164"], call["started_at"], call["outcome"],
            tuple(TakenMessage(row["caller_name"], row["subject"], row["message"])
                  for row in messages),
            tuple(BookedAppointment(row["reference"], row["starts_at"], row["caller_name"],
                                    row["subject"]) for row in appointments))
        return summary, call["deliver_group_chat_id"]

    async def call_ended(self, call_id: UUID) -> None:
        """Post the entry of an ended call, if its line announces; never raises."""
        try:
            found = await self._summary(call_id)
            if found is None:
                return
            summary, chat_id = found
            text = announcement(summary, call_link(self.public_url, summary.call_id))
            await self.chats.append(chat_id, "assistant", text)
        except Exception:
            log.exception("the call could not be announced", extra={"call": str(call_id)})
