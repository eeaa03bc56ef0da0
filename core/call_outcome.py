"""The outcome of a telephone call, as a machine: what ended it and what to do next.

A call is ``in_progress`` from answer until one input ends it; the outcome it reaches
is final and is what the call log shows. The transitions are the table
``TRANSITIONS``; ``OutcomeMachine`` keeps one call's outcome and applies it.

spec: telephony.md "Call outcome" gives one row — in progress, opening notice cannot
be synthesised, ``notice_failed``, call ends — and leaves the rest to us:

* ``completed``: the caller hung up after the stream carried audio, or the agent ended
  the conversation.
* ``carrier_ended``: the carrier reported the call over (status ``completed``,
  ``busy``, ``failed``, ``no-answer``, ``canceled``) before its media stream started.
* ``dropped``: the audio connection broke without a hangup (reset, protocol error,
  an error from the telephone system other than the caller hanging up), or the server
  process running the call stopped or lost its database and its lease lapsed
  (``core.call_leases``).
* ``no_media``: no connection presented the ticket within its deadline, or the
  connection carried no audio before it was given up on (spec: telephony.md "Limits",
  5 seconds each).
* ``line_full``: turned away because ``telephony.max_concurrent_calls`` calls were in
  progress; the call is logged with this outcome as it is refused.
* ``transferred``: a transfer was decided and passed the screening gate.

A final outcome absorbs the inputs that merely echo an end (the caller's hangup, the
carrier's status, the socket closing, our own hangup) and ignores them. An input that
is a decision (notice failure, no media, line full, transfer) in a final state is a
bug — two decisions for one call — and the table miss raises ``LocalProtocolError``.
"""

from __future__ import annotations

__all__ = [
    "FINAL_OUTCOMES",
    "TRANSITIONS",
    "CallInput",
    "CallOutcome",
    "OutcomeEffect",
    "OutcomeMachine",
    "transition",
]

import enum
import itertools

from ._transitions import look_up


class CallOutcome(enum.Enum):
    """A call's outcome; the values are those stored and shown in the call log."""

    #: The call is under way.
    IN_PROGRESS = "in_progress"
    #: The conversation ran and ended by a hangup on either side.
    COMPLETED = "completed"
    #: The carrier ended the call before any audio flowed.
    CARRIER_ENDED = "carrier_ended"
    #: The audio connection broke unexpectedly.
    DROPPED = "dropped"
    #: No audio arrived in time.
    NO_MEDIA = "no_media"
    #: Refused after answer: the concurrent-call cap was reached.
    LINE_FULL = "line_full"
    #: Put through to a person.
    TRANSFERRED = "transferred"
    #: The opening notice could not be synthesised; the call ended (fail-closed).
    NOTICE_FAILED = "notice_failed"


class CallInput(enum.Enum):
    """What can happen to a call."""

    #: The opening notice cannot be synthesised: synthesis is unavailable.
    NOTICE_UNAVAILABLE = "notice_unavailable"
    #: The caller hung up after the stream carried audio.
    CALLER_HUNG_UP = "caller_hung_up"
    #: The agent ended the conversation.
    SERVICE_HUNG_UP = "service_hung_up"
    #: A carrier status callback reported the call over before its stream started.
    CARRIER_ENDED_BEFORE_MEDIA = "carrier_ended_before_media"
    #: The audio connection broke without a hangup.
    MEDIA_LOST = "media_lost"
    #: The process running the call is gone: its lease lapsed (``core.call_leases``).
    OWNER_LOST = "owner_lost"
    #: No ticket presented in time, or no audio before the connection went silent.
    NO_MEDIA = "no_media"
    #: Refused after answer for concurrency.
    LINE_FULL = "line_full"
    #: A transfer was decided and the screening gate passed.
    TRANSFERRED = "transferred"


class OutcomeEffect(enum.Enum):
    """What the caller of the machine must do."""

    #: Hang up our side of the call, then record the outcome.
    END_CALL = "end_call"
    #: The call already ended elsewhere: record the outcome.
    RECORD = "record"
    #: Stop the recording, record the outcome, and let the continue request dial the
    #: transfer number (spec: telephony.md "Recording" — it stops once put through).
    HAND_OFF = "hand_off"
    #: A late echo of an end already recorded: change nothing.
    IGNORE = "ignore"


_O, _I, _E = CallOutcome, CallInput, OutcomeEffect

#: Outcomes that no input leaves.
FINAL_OUTCOMES = frozenset(outcome for outcome in CallOutcome if outcome is not _O.IN_PROGRESS)

# Inputs that report an end which may already have been decided by something else.
_ECHOES = (_I.CALLER_HUNG_UP, _I.SERVICE_HUNG_UP, _I.CARRIER_ENDED_BEFORE_MEDIA, _I.MEDIA_LOST,
           _I.OWNER_LOST)

#: ``(outcome, input) -> (side_effect, target)``.
TRANSITIONS: dict[tuple[CallOutcome, CallInput], tuple[OutcomeEffect, CallOutcome]] = {
    # spec: telephony.md "Call outcome" — the one row the spec gives.
    (_O.IN_PROGRESS, _I.NOTICE_UNAVAILABLE): (_E.END_CALL, _O.NOTICE_FAILED),
    (_O.IN_PROGRESS, _I.CALLER_HUNG_UP): (_E.RECORD, _O.COMPLETED),
    (_O.IN_PROGRESS, _I.SERVICE_HUNG_UP): (_E.END_CALL, _O.COMPLETED),
    (_O.IN_PROGRESS, _I.CARRIER_ENDED_BEFORE_MEDIA): (_E.RECORD, _O.CARRIER_ENDED),
    (_O.IN_PROGRESS, _I.MEDIA_LOST): (_E.RECORD, _O.DROPPED),
    (_O.IN_PROGRESS, _I.OWNER_LOST): (_E.RECORD, _O.DROPPED),
    (_O.IN_PROGRESS, _I.NO_MEDIA): (_E.END_CALL, _O.NO_MEDIA),
    (_O.IN_PROGRESS, _I.LINE_FULL): (_E.END_CALL, _O.LINE_FULL),
    (_O.IN_PROGRESS, _I.TRANSFERRED): (_E.HAND_OFF, _O.TRANSFERRED),
    # A final outcome ignores every echo of an end and keeps itself.
    **{
        (final, echo): (_E.IGNORE, final)
        for final, echo in itertools.product(sorted(FINAL_OUTCOMES, key=lambda o: o.value), _ECHOES)
    },
}


def transition(outcome: CallOutcome, given: CallInput) -> tuple[OutcomeEffect, CallOutcome]:
    """Return ``(side_effect, target)``; ``LocalProtocolError`` for a second decision
    on a call that already has its outcome."""
    return look_up(TRANSITIONS, outcome, given)


class OutcomeMachine:
    """One call's outcome, starting ``in_progress``.

    Call ``process`` with each input as it happens and act on the effect it returns;
    read ``outcome`` to store it.
    """

    def __init__(self, outcome: CallOutcome = CallOutcome.IN_PROGRESS) -> None:
        self._outcome = outcome

    @property
    def outcome(self) -> CallOutcome:
        return self._outcome

    @property
    def is_final(self) -> bool:
        return self._outcome in FINAL_OUTCOMES

    def process(self, given: CallInput) -> OutcomeEffect:
        """Apply one input; raises ``LocalProtocolError`` and changes nothing when the
        table has no row for it."""
        effect, self._outcome = transition(self._outcome, given)
        return effect
