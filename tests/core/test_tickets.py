"""Single-use tickets: the transition table over every state and input, and the
redeem-or-reject decision on stored records (spec: telephony.md "Pbx ticket")."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import LocalProtocolError
from core.tickets import (
    TICKET_LIFETIME_SECONDS,
    TRANSITIONS,
    Ticket,
    TicketEffect,
    TicketInput,
    TicketState,
    issue_ticket,
    present_ticket,
    transition,
)
from tests.support.transition_table import transition_table_tests

S, I, E = TicketState, TicketInput, TicketEffect


def spec_row(state: TicketState, given_input: TicketInput):
    """The spec's table read row by row; None marks a pair that must raise."""
    if given_input is I.ISSUE:
        # An answer that passed every check issues a ticket; never over another one.
        return (E.STORE, S.VALID) if state is S.NONE else None
    if state is S.VALID and given_input is I.PRESENT_IN_TIME:
        return (E.REDEEM, S.REDEEMED)
    # Any further presentation, a late one, or an unknown identifier.
    return (E.REJECT, S.REJECTED)


EXPECTED = {(state, given_input): spec_row(state, given_input) for state in S for given_input in I}

TestTransitionTable = transition_table_tests(transition, EXPECTED, TicketState, TicketInput)


def test_only_a_valid_ticket_presented_in_time_is_redeemed():
    redeeming = [pair for pair, (effect, _) in TRANSITIONS.items() if effect is E.REDEEM]
    assert redeeming == [(S.VALID, I.PRESENT_IN_TIME)]


def test_an_issued_ticket_is_valid_and_carries_its_issue_time():
    ticket = issue_ticket("b2b0c6b2-1f5e-4a57-9d3c-4f1f2a3b4c5d", now=1000.0)
    assert ticket == Ticket(token="b2b0c6b2-1f5e-4a57-9d3c-4f1f2a3b4c5d", issued_at=1000.0)
    assert ticket.state is S.VALID


def test_a_ticket_needs_a_token():
    with pytest.raises(LocalProtocolError):
        issue_ticket("", now=0.0)


@pytest.mark.parametrize("age", [0.0, 0.5, 29.999, TICKET_LIFETIME_SECONDS, -2.0])
def test_first_presentation_within_30_seconds_is_redeemed(age):
    ticket = issue_ticket("t", now=1000.0)
    decision = present_ticket(ticket, now=1000.0 + age)
    assert decision.admitted
    assert decision.state is S.REDEEMED
    assert decision.ticket == Ticket("t", issued_at=1000.0, redeemed_at=1000.0 + age)


@pytest.mark.parametrize("age", [30.001, 31.0, 3600.0, math.inf, math.nan])
def test_presentation_after_30_seconds_is_rejected(age):
    ticket = issue_ticket("t", now=1000.0)
    decision = present_ticket(ticket, now=1000.0 + age)
    assert not decision.admitted
    assert (decision.effect, decision.state, decision.ticket) == (E.REJECT, S.REJECTED, ticket)


def test_second_presentation_is_rejected_even_in_time():
    first = present_ticket(issue_ticket("t", now=0.0), now=1.0)
    second = present_ticket(first.ticket, now=2.0)
    assert not second.admitted
    assert second.ticket == first.ticket


def test_unknown_identifier_is_rejected():
    decision = present_ticket(None, now=0.0)
    assert (decision.effect, decision.state, decision.ticket) == (E.REJECT, S.REJECTED, None)


def test_lifetime_is_configurable_by_the_caller():
    ticket = issue_ticket("t", now=0.0)
    assert not present_ticket(ticket, now=6.0, lifetime=5.0).admitted


@given(
    issued=st.floats(min_value=0, max_value=2e9),
    presentations=st.lists(st.floats(min_value=-5, max_value=120), min_size=1, max_size=6),
)
def test_a_ticket_admits_at_most_one_connection(issued, presentations):
    ticket = issue_ticket("t", now=issued)
    admitted = 0
    for offset in presentations:
        decision = present_ticket(ticket, now=issued + offset)
        admitted += decision.admitted
        ticket = decision.ticket
    assert admitted <= 1
