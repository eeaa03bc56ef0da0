"""A line of an account and a call in progress on it, as the voice session has them,
for the tests that drive the diary's call tools."""

from __future__ import annotations

import uuid

from app.tables import NotifyTarget, TelephonyCall, TelephonyLine
from app.services.call_context import CallContext

LINE = "+441632960001"
CALLER = "+447700900123"
# The diary's tools an agent answering a line is given.
CALL_TOOLS = ["offer_times", "book_appointment", "change_appointment", "cancel_appointment",
              "take_message", "put_through"]


async def a_call(account_id: uuid.UUID, *, transfer_e164: str | None = None,
                 caller: str = CALLER) -> CallContext:
    """A line of the account and a call in progress on it, as the voice session has."""
    line = TelephonyLine(e164=LINE, owner_user_id=account_id, transfer_e164=transfer_e164,
                         enabled=True)
    await line.save()
    call = TelephonyCall(number_id=line.id, e164=LINE, from_number=caller or "anonymous",
                         provider="carrier", owner_id=account_id)
    await call.save()
    return CallContext(call.id, line.id, account_id, caller)


async def a_target(account_id: uuid.UUID) -> None:
    """A notification target taking every event, so the outbox shows what was decided."""
    await NotifyTarget(account_id=account_id, kind="webhook", url_enc="sealed",
                       host="hooks.example.org",
                       events=["message_taken", "appointment_booked", "appointment_moved",
                               "appointment_cancelled"]).save()
