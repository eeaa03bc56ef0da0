"""``frozen``: how svc declares a value, an event or a command.

Every record that is built once and then only read (a protocol event, an action for
the I/O layer, a decision returned by a rule, a row handed between layers) is a frozen,
slotted dataclass: compared by value, its fields never reassigned, and without a
per-instance ``__dict__``, which matters for the events a call makes fifty times a
second. It hashes by value where its fields do (a record holding a list or a dict is
not hashable, and what such a field holds can still change). One decorator says so
everywhere, as attrs' ``@frozen`` does, so the choice is made once and a reader meets
one word for it.
"""

from __future__ import annotations

__all__ = ["frozen"]

from dataclasses import Field, dataclass, field
from typing import TypeVar, dataclass_transform

RecordT = TypeVar("RecordT")


# ``field_specifiers`` lets type checkers read ``field(repr=False)`` and the like.
@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def frozen(cls: type[RecordT]) -> type[RecordT]:
    """Return ``cls`` as a frozen dataclass with ``__slots__``."""
    return dataclass(frozen=True, slots=True)(cls)
