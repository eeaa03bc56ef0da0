"""Looking up a business machine's transition table, h2 style.

A table maps ``(state, input)`` to ``(side_effect, target)``; it is data, written out in
the module that owns the machine. A pair the table does not hold is our own misuse
of the machine, so the lookup raises ``LocalProtocolError`` naming both.
"""

from __future__ import annotations

__all__ = ["look_up"]

import enum
from collections.abc import Mapping
from typing import TypeVar

from .errors import LocalProtocolError

StateT = TypeVar("StateT", bound=enum.Enum)
InputT = TypeVar("InputT", bound=enum.Enum)
EffectT = TypeVar("EffectT", bound=enum.Enum)


def look_up(
    table: Mapping[tuple[StateT, InputT], tuple[EffectT, StateT]],
    state: StateT,
    given: InputT,
) -> tuple[EffectT, StateT]:
    """Return ``(side_effect, target)`` for ``given`` in ``state``."""
    try:
        return table[(state, given)]
    except KeyError:
        raise LocalProtocolError(
            f"input {given.name} is not allowed in state {state.name}", hint=(state, given)
        ) from None
