"""The two checks every business machine's transition table gets in its tests: the
hand-written expectations cover every ``(state, input)`` pair, and each pair is either
the expected row or a ``LocalProtocolError`` naming both."""

from __future__ import annotations

__all__ = ["transition_table_tests"]

import enum
import itertools
from collections.abc import Callable, Mapping

import pytest

from core.errors import LocalProtocolError


def transition_table_tests(
    transition: Callable[[enum.Enum, enum.Enum], tuple[enum.Enum, enum.Enum]],
    expected: Mapping[tuple[enum.Enum, enum.Enum], tuple[enum.Enum, enum.Enum] | None],
    states: type[enum.Enum],
    inputs: type[enum.Enum],
) -> type:
    """Return a class holding the two tests; bind it to a ``Test*`` name in the test
    module. In ``expected``, None marks a pair that must raise."""
    pairs = list(itertools.product(states, inputs))

    class TransitionTable:
        def test_expectations_cover_every_state_and_input(self) -> None:
            assert set(expected) == set(pairs)

        @pytest.mark.parametrize(("state", "given_input"), pairs, ids=lambda v: v.name)
        def test_every_state_and_input_is_a_row_or_a_local_error(self, state, given_input) -> None:
            row = expected[(state, given_input)]
            if row is None:
                with pytest.raises(LocalProtocolError) as caught:
                    transition(state, given_input)
                assert state.name in str(caught.value) and given_input.name in str(caught.value)
                assert caught.value.hint == (state, given_input)
            else:
                assert transition(state, given_input) == row

    return TransitionTable
