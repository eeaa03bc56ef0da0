"""``frozen``: how svc declares a value, an event or a command.

Every record that is built once and then only read (a protocol event, an action for
the I/O layer, a decision returned by a rule, a row handed between layers) is a frozen,
slotted dataclass: compared and hashed by value, immune to a later write, and without
a per-instance ``__dict__``, which matters for the events a call makes fifty times a
second. One decorator says so everywhere, as attrs' ``@frozen`` does, so the choice is
made once and a reader meets one word for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, dataclass_transform

__all__ = ["frozen"]

RecordT = TypeVar("RecordT")


@dataclass_transform(frozen_default=True)
def frozen(cls: type[RecordT]) -> type[RecordT]:
    """Return ``cls`` as a frozen dataclass with ``__slots__``."""
    return dataclass(frozen=True, slots=True)(cls)
