"""An appointment's states over every state and input, and the change-by-telephone
rule with its three attempts per call (spec: telephony.md "Appointment", "Diary (per
account)", "Limits")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.diary import (
    LIVE_STATES,
    MAX_CHANGE_ATTEMPTS,
    TRANSITIONS,
    Appointment,
    AppointmentEffect,
    AppointmentInput,
    AppointmentState,
    ChangeDecision,
    ChangeGate,
    may_change,
    transition,
)
from tests.support.transition_table import transition_table_tests

S, I, E = AppointmentState, AppointmentInput, AppointmentEffect

# The spec's table and our additions, written out once more; None must raise.
EXPECTED = {
    (S.NONE, I.BOOK): (E.NOTIFY_BOOKED, S.BOOKED),
    (S.NONE, I.MOVE): None,
    (S.NONE, I.CANCEL): None,
    (S.BOOKED, I.BOOK): None,
    (S.BOOKED, I.MOVE): (E.NOTIFY_MOVED, S.MOVED),
    (S.BOOKED, I.CANCEL): (E.NOTIFY_CANCELLED, S.CANCELLED),
    (S.MOVED, I.BOOK): None,
    (S.MOVED, I.MOVE): (E.NOTIFY_MOVED, S.MOVED),
    (S.MOVED, I.CANCEL): (E.NOTIFY_CANCELLED, S.CANCELLED),
    (S.CANCELLED, I.BOOK): None,
    (S.CANCELLED, I.MOVE): None,
    (S.CANCELLED, I.CANCEL): (E.IGNORE, S.CANCELLED),
}

TestTransitionTable = transition_table_tests(transition, EXPECTED, AppointmentState, AppointmentInput)


def test_effects_name_the_outward_notification_events():
    assert {effect.value for effect in E if effect is not E.IGNORE} == {
        "appointment_booked",
        "appointment_moved",
        "appointment_cancelled",
    }


@given(st.lists(st.sampled_from(AppointmentInput), max_size=12))
def test_every_change_notifies_and_cancelled_stays_cancelled_and_silent(inputs):
    state = S.NONE
    for given_input in inputs:
        was = state
        if (was, given_input) not in TRANSITIONS:
            continue
        effect, state = transition(was, given_input)
        if was is S.CANCELLED:
            assert (effect, state) == (E.IGNORE, S.CANCELLED)
        else:
            assert effect is not E.IGNORE


BOOKING = Appointment(
    reference="HEFKCF",
    caller_name="Dr Jane O'Neil",
    caller_number="+44 20 7946 0000",
    state=S.BOOKED,
)


@pytest.mark.parametrize(
    ("reference", "number", "name"),
    [
        ("HEFKCF", "+442079460000", None),
        ("hef kcf", "0044 20 7946 0000", None),
        ("HEF-KCF", None, "jane oneil"),
        ("HEFKCF", None, "O'Neil, Jane"),
        ("HEFKCF", "+15550000000", "Mrs Jane O’Neil"),  # the wrong number, the right name
        ("HEFKCF", "+442079460000", "Someone Else"),  # the right number, the wrong name
    ],
)
def test_the_reference_plus_the_number_or_the_name_allows_a_change(reference, number, name):
    assert may_change(reference, number, name, BOOKING)


@pytest.mark.parametrize(
    ("reference", "number", "name"),
    [
        ("HEFKCX", "+442079460000", "Jane O'Neil"),  # the wrong reference
        (None, "+442079460000", "Jane O'Neil"),
        ("", "+442079460000", "Jane O'Neil"),
        ("HEFKCF", None, None),  # the reference alone
        ("HEFKCF", "+15550000000", "John Smith"),
        ("HEFKCF", "not a number", "O'Neil"),  # a surname is not the booked name
        ("HEFKCF", "", ""),
        ("HEFKCF", None, "Dr"),
    ],
)
def test_anything_less_is_refused(reference, number, name):
    assert not may_change(reference, number, name, BOOKING)


def test_a_withheld_number_at_booking_leaves_the_name():
    withheld = Appointment("HEFKCF", "Jane O'Neil", None, S.BOOKED)
    assert not may_change("HEFKCF", "+442079460000", None, withheld)
    assert may_change("HEFKCF", "+442079460000", "Jane O'Neil", withheld)


@pytest.mark.parametrize("state", list(AppointmentState), ids=lambda s: s.name)
def test_only_a_live_appointment_can_be_changed(state):
    appointment = Appointment("HEFKCF", "Jane O'Neil", "+442079460000", state)
    assert may_change("HEFKCF", "+442079460000", None, appointment) is (state in LIVE_STATES)


@given(st.text(), st.text(), st.text())
def test_the_rule_never_raises(reference, number, name):
    assert may_change(reference, number, name, BOOKING) in (True, False)


def test_three_refused_attempts_end_changes_on_the_call():
    gate = ChangeGate()
    assert gate.remaining == MAX_CHANGE_ATTEMPTS == 3
    assert gate.attempt("XXXXXX", "+442079460000", None, None) is ChangeDecision.REFUSED
    assert gate.attempt("HEFKCF", "+15550000000", None, BOOKING) is ChangeDecision.REFUSED
    assert gate.remaining == 1
    assert gate.attempt("HEFKCF", None, "Jim", BOOKING) is ChangeDecision.EXHAUSTED
    # Nothing more is checked on this call, not even the right details.
    assert gate.attempt("HEFKCF", "+442079460000", None, BOOKING) is ChangeDecision.EXHAUSTED
    assert gate.remaining == 0


def test_an_allowed_attempt_costs_nothing():
    gate = ChangeGate()
    for _ in range(5):
        assert gate.attempt("HEFKCF", "+442079460000", None, BOOKING) is ChangeDecision.ALLOWED
    assert gate.remaining == 3


def test_a_refusal_says_the_same_whichever_part_was_wrong():
    answers = set()
    for reference, number, name, appointment in [
        ("XXXXXX", "+442079460000", None, BOOKING),
        ("HEFKCF", "+15550000000", None, BOOKING),
        ("HEFKCF", None, "Jim Bob", BOOKING),
        ("NOSUCH", None, None, None),
    ]:
        decision = ChangeGate().attempt(reference, number, name, appointment)
        answers.add((decision, decision.text))
    assert len(answers) == 1
    ((decision, text),) = answers
    assert decision is ChangeDecision.REFUSED and text
    assert ChangeDecision.ALLOWED.text is None
    assert "message" in ChangeDecision.EXHAUSTED.text


@given(st.lists(st.booleans(), max_size=10))
def test_at_most_three_refusals_are_ever_checked(rights):
    gate = ChangeGate()
    refusals = 0
    for right in rights:
        decision = gate.attempt("HEFKCF", "+442079460000" if right else "+1555", None, BOOKING)
        if refusals >= MAX_CHANGE_ATTEMPTS:
            assert decision is ChangeDecision.EXHAUSTED
        elif right:
            assert decision is ChangeDecision.ALLOWED
        else:
            refusals += 1
            assert decision is (
                ChangeDecision.EXHAUSTED
                if refusals == MAX_CHANGE_ATTEMPTS
                else ChangeDecision.REFUSED
            )
