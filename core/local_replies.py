"""What the built-in ``local`` model decides in a turn: say something, or call a tool."""

from __future__ import annotations

__all__ = ["LocalAnswer", "LocalToolCall"]

from dataclasses import field
from typing import Any

from .records import frozen


@frozen
class LocalAnswer:
    text: str


@frozen
class LocalToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
