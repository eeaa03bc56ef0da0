"""What the built-in ``local`` model decides in a turn: say something, or call a tool."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["LocalAnswer", "LocalToolCall"]


@dataclass(frozen=True, slots=True)
class LocalAnswer:
    text: str


@dataclass(frozen=True, slots=True)
class LocalToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
