"""What a telephone call carries from turn to turn for the tools that act on it.

The voice session creates one ``CallContext`` per answered call and passes it with
every turn (``TurnRequest.call``). Tools that act for the caller (the diary's booking
tools, taking a message, putting a caller through) receive it from the registry and
record their decisions in it; after each turn the voice session reads
``transfer_requested``/``transfer_allowed`` and ``end_requested`` to decide how the
call ends: a transfer only when both transfer flags are true; requested but not
allowed (the screening gate said no) means the conversation goes on.

It lives beside the pipeline and the tool registry that carry it, below the features:
telephony fills it in and the diary's tools read it, and neither imports the other.

spec: telephony.md "Diary" (three change attempts per call), "Screening list" (the
transfer gate), "Tools on a call".
"""

from __future__ import annotations

__all__ = ["CHANGE_ATTEMPTS_PER_CALL", "CallContext"]

from dataclasses import dataclass
from uuid import UUID

from core.diary import MAX_CHANGE_ATTEMPTS

#: spec: "Limits" — change-by-telephone attempts, 3 per call (``core.diary``'s rule)
CHANGE_ATTEMPTS_PER_CALL = MAX_CHANGE_ATTEMPTS


@dataclass
class CallContext:
    """One call as the tools see it. ``account_id`` is the line's owner: the identity
    the agent acts for. ``caller_number`` is E.164, '' when the caller withheld it.
    ``call_id`` is None for a conversation in text with the line, which is no call:
    what its tools book or take is linked to no call in the log."""

    call_id: UUID | None
    line_id: UUID
    account_id: UUID
    caller_number: str
    change_attempts: int = 0  # refused change-by-telephone attempts so far
    caller_verdict: str | None = None  # screening: 'clear' | 'match' | None (not checked)
    transfer_requested: bool = False  # the put-through tool decided to transfer
    transfer_allowed: bool = False  # ...and the screening gate let it through
    end_requested: bool = False  # the agent decided to end the call

    @property
    def change_attempts_left(self) -> int:
        return max(0, CHANGE_ATTEMPTS_PER_CALL - self.change_attempts)
