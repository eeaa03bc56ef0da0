"""What the built-in ``local`` model decides in a turn: say something, or call a tool."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from .records import frozen

__all__ = ["LocalAnswer", "LocalToolCall"]


@frozen
class LocalAnswer:
    text: str


@frozen
class LocalToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
