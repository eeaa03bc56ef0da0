"""Single-use tickets that admit one audio connection to a call.

Both transports use them: the pbx identifier returned by the answer request, and the
carrier ticket carried in the stream's ``customParameters``. The lifecycle is the
transition table ``TRANSITIONS``; ``issue_ticket`` and ``present_ticket`` apply it to a
stored record. Nothing here stores, draws tokens or reads a clock: the caller passes
the token (for pbx, the text of a UUID, since AudioSocket presents a 16-byte UUID) and
``now`` in seconds on the same clock as the stored ``issued_at``. The database layer
calls ``present_ticket`` inside the transaction that reads the record, and writes
back the record it returns.

spec: telephony.md "Pbx ticket" —

========  ===============================================  ========
state     moved by                                         next
========  ===============================================  ========
(none)    answer request that passed every check           valid
valid     connection presenting it within 30 s, first use  redeemed
valid or  any further presentation, or an unknown          rejected
redeemed  identifier
========  ===============================================  ========
"""

from __future__ import annotations

__all__ = [
    "TICKET_LIFETIME_SECONDS",
    "TRANSITIONS",
    "Presentation",
    "Ticket",
    "TicketEffect",
    "TicketInput",
    "TicketState",
    "issue_ticket",
    "present_ticket",
    "transition",
]

import enum
from dataclasses import replace

from ._transitions import look_up
from .errors import LocalProtocolError
from .records import frozen

# spec: telephony.md "Limits" — "Ticket lifetime: 30 seconds, redeemed once".
TICKET_LIFETIME_SECONDS = 30.0


# A ticket lives only in memory for its thirty seconds: its states, inputs and effects
# are never stored or sent, so their values carry nothing and are left to ``auto``.


class TicketState(enum.Enum):
    """Where a ticket stands."""

    #: No ticket holds this identifier: never issued, or already removed.
    NONE = enum.auto()
    #: Issued by an answer that passed every check; not yet presented.
    VALID = enum.auto()
    #: Presented once, in time: its connection proceeds.
    REDEEMED = enum.auto()
    #: A presentation was turned away; nothing can redeem the ticket any more.
    REJECTED = enum.auto()


class TicketInput(enum.Enum):
    """What happens to a ticket."""

    #: An answer request passed every check and a token was minted for it.
    ISSUE = enum.auto()
    #: A connection presented the identifier within the ticket's lifetime.
    PRESENT_IN_TIME = enum.auto()
    #: A connection presented the identifier after the lifetime, or no ticket has it.
    PRESENT_LATE = enum.auto()


class TicketEffect(enum.Enum):
    """What the caller of the machine must do."""

    #: Store the new ticket with its issue time.
    STORE = enum.auto()
    #: Store the ticket as redeemed and let the audio proceed.
    REDEEM = enum.auto()
    #: Close the connection without a word (spec: telephony.md "Pbx ticket").
    REJECT = enum.auto()


_S, _I, _E = TicketState, TicketInput, TicketEffect

# spec: telephony.md "Pbx ticket" — a valid ticket presented in time is redeemed;
# any other presentation (again, late, or of an identifier no ticket has) is rejected.
_PRESENTATIONS = (_I.PRESENT_IN_TIME, _I.PRESENT_LATE)

#: ``(state, input) -> (side_effect, target)``. Issuing is only ever from nothing,
#: because a token minted twice is a bug of the caller.
TRANSITIONS: dict[tuple[TicketState, TicketInput], tuple[TicketEffect, TicketState]] = {
    (_S.NONE, _I.ISSUE): (_E.STORE, _S.VALID),
    **{(state, presented): (_E.REJECT, _S.REJECTED)
       for state in _S for presented in _PRESENTATIONS},
    # The one presentation that redeems; a later key takes the earlier one's place.
    (_S.VALID, _I.PRESENT_IN_TIME): (_E.REDEEM, _S.REDEEMED),
}


def transition(state: TicketState, given: TicketInput) -> tuple[TicketEffect, TicketState]:
    """Return ``(side_effect, target)``; ``LocalProtocolError`` for a pair the table
    does not hold (issuing over an existing ticket)."""
    return look_up(TRANSITIONS, state, given)


@frozen
class Ticket:
    """A stored ticket. ``redeemed_at`` is ``None`` until a connection redeems it."""

    token: str
    issued_at: float
    redeemed_at: float | None = None

    @property
    def state(self) -> TicketState:
        return TicketState.VALID if self.redeemed_at is None else TicketState.REDEEMED


@frozen
class Presentation:
    """The decision on one presentation. ``ticket`` is what to store afterwards: the
    redeemed ticket, or the stored one unchanged when rejected (``None`` if unknown)."""

    effect: TicketEffect
    state: TicketState
    ticket: Ticket | None

    @property
    def admitted(self) -> bool:
        """Whether the connection may proceed."""
        return self.effect is TicketEffect.REDEEM


def issue_ticket(token: str, now: float) -> Ticket:
    """Mint the record of a ticket for an answer that passed every check."""
    if not token:
        raise LocalProtocolError("a ticket needs a non-empty token")
    transition(TicketState.NONE, TicketInput.ISSUE)
    return Ticket(token=token, issued_at=now)


def present_ticket(
    ticket: Ticket | None, now: float, *, lifetime: float = TICKET_LIFETIME_SECONDS
) -> Presentation:
    """Decide a connection presenting an identifier: redeem or reject.

    ``ticket`` is the stored record for the identifier, ``None`` when there is none.
    """
    state = TicketState.NONE if ticket is None else ticket.state
    effect, target = transition(state, _timing(ticket, now, lifetime))
    if effect is TicketEffect.REDEEM:
        assert ticket is not None  # only a stored, valid ticket is redeemed
        return Presentation(effect, target, replace(ticket, redeemed_at=now))
    return Presentation(effect, target, ticket)


def _timing(ticket: Ticket | None, now: float, lifetime: float) -> TicketInput:
    # Without a ticket there is no lifetime left. A ticket "lives 30 seconds": a
    # presentation at exactly 30 s still counts. An issue time slightly ahead of
    # ``now`` (clocks of two instances) counts as in time. Written so that a NaN time
    # fails closed.
    if ticket is None or not now - ticket.issued_at <= lifetime:
        return TicketInput.PRESENT_LATE
    return TicketInput.PRESENT_IN_TIME
