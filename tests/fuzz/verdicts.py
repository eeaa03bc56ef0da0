"""The two answers a reader gives to any input: what it read, or its own refusal."""

from __future__ import annotations

__all__ = ["read_or_refusal"]

from collections.abc import Callable
from typing import Any, TypeVar

RefusalT = TypeVar("RefusalT", bound=Exception)


def read_or_refusal(read: Callable[[Any], Any], given: Any,
                    refusal: type[RefusalT]) -> Any | RefusalT:
    """``read(given)``, or the ``refusal`` it raised instead; any other exception is the
    reader's bug and fails the case."""
    try:
        return read(given)
    except refusal as error:
        return error
