"""Call outcomes: the transition table over every outcome and input, and the machine
over any sequence of inputs (spec: telephony.md "Call outcome")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.call_outcome import (
    FINAL_OUTCOMES,
    CallInput,
    CallOutcome,
    OutcomeEffect,
    OutcomeMachine,
    transition,
)
from core.errors import LocalProtocolError
from tests.support.transition_table import transition_table_tests

O, I, E = CallOutcome, CallInput, OutcomeEffect

FROM_IN_PROGRESS = {
    I.NOTICE_UNAVAILABLE: (E.END_CALL, O.NOTICE_FAILED),
    I.CALLER_HUNG_UP: (E.RECORD, O.COMPLETED),
    I.SERVICE_HUNG_UP: (E.END_CALL, O.COMPLETED),
    I.CARRIER_ENDED_BEFORE_MEDIA: (E.RECORD, O.CARRIER_ENDED),
    I.MEDIA_LOST: (E.RECORD, O.DROPPED),
    I.OWNER_LOST: (E.RECORD, O.DROPPED),
    I.NO_MEDIA: (E.END_CALL, O.NO_MEDIA),
    I.LINE_FULL: (E.END_CALL, O.LINE_FULL),
    I.TRANSFERRED: (E.HAND_OFF, O.TRANSFERRED),
}
# Echoes of an end are ignored once the call has its outcome; decisions are errors.
ECHOES = {I.CALLER_HUNG_UP, I.SERVICE_HUNG_UP, I.CARRIER_ENDED_BEFORE_MEDIA, I.MEDIA_LOST,
          I.OWNER_LOST}


def expected(outcome: CallOutcome, given_input: CallInput):
    if outcome is O.IN_PROGRESS:
        return FROM_IN_PROGRESS[given_input]
    return (E.IGNORE, outcome) if given_input in ECHOES else None


TestTransitionTable = transition_table_tests(
    transition,
    {(outcome, given_input): expected(outcome, given_input) for outcome in O for given_input in I},
    CallOutcome,
    CallInput,
)


def test_outcome_values_are_exactly_the_spec_list():
    assert {o.value for o in CallOutcome} == {
        "completed",
        "carrier_ended",
        "dropped",
        "no_media",
        "line_full",
        "transferred",
        "notice_failed",
        "in_progress",
    }


def test_notice_that_cannot_be_synthesised_ends_the_call_as_notice_failed():
    # The one row the spec gives.
    assert transition(O.IN_PROGRESS, I.NOTICE_UNAVAILABLE) == (E.END_CALL, O.NOTICE_FAILED)


def test_every_final_outcome_is_reachable_from_in_progress():
    targets = [FROM_IN_PROGRESS[i][1] for i in CallInput]
    assert set(targets) == FINAL_OUTCOMES


@given(st.lists(st.sampled_from(CallInput), max_size=12))
def test_the_first_decisive_input_fixes_the_outcome_for_good(inputs):
    machine = OutcomeMachine()
    first_final = None
    for given_input in inputs:
        before = machine.outcome
        try:
            effect = machine.process(given_input)
        except LocalProtocolError:
            assert machine.outcome is before  # a refused input changes nothing
            continue
        if before is O.IN_PROGRESS:
            first_final = machine.outcome
        else:
            assert effect is E.IGNORE
        assert machine.is_final
    assert machine.outcome is (first_final or O.IN_PROGRESS)


def test_a_transferred_call_ignores_the_caller_hanging_up_afterwards():
    machine = OutcomeMachine()
    assert machine.process(I.TRANSFERRED) is E.HAND_OFF
    assert machine.process(I.CALLER_HUNG_UP) is E.IGNORE
    assert machine.outcome is O.TRANSFERRED


def test_a_second_decision_on_an_ended_call_is_a_local_error():
    machine = OutcomeMachine()
    machine.process(I.NOTICE_UNAVAILABLE)
    with pytest.raises(LocalProtocolError):
        machine.process(I.TRANSFERRED)
    assert machine.outcome is O.NOTICE_FAILED


def test_a_machine_can_resume_from_a_stored_outcome():
    machine = OutcomeMachine(O.DROPPED)
    assert machine.is_final
    assert machine.process(I.MEDIA_LOST) is E.IGNORE
