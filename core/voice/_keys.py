"""Keys the caller presses, collected into one entry the agent can read.

A caller keys a reference number or a menu choice digit by digit. ``KeyEntry`` keeps
the digits until the entry is over — ``#`` pressed, or ``KEY_PAUSE_SECONDS`` without
another key — and then gives it as the text of a turn ("Digits pressed: 1234"), so
the agent reads it as it reads what the caller said. ``#`` ends the entry and is not
part of it; ``*`` and ``A``-``D`` are kept. Pure: ``now`` is the adapter's clock.
"""

from __future__ import annotations

__all__ = ["KEY_PAUSE_SECONDS", "MAX_KEYS", "KeyEntry", "keys_text"]

#: Quiet on the keypad that ends an entry.
KEY_PAUSE_SECONDS = 2.0
#: Keys kept in one entry at most: longer than any reference or card a caller keys.
MAX_KEYS = 32
_END_KEY = "#"


def keys_text(keys: str) -> str:
    """The turn an entry becomes, as the agent (and the transcript) reads it."""
    return f"Digits pressed: {keys}" if keys else "The caller pressed #."


class KeyEntry:
    """Collects one entry of keys; ``deadline`` says when ``expire`` must be called."""

    def __init__(self) -> None:
        self._keys: list[str] = []
        self._last_at: float | None = None

    @property
    def deadline(self) -> float | None:
        """When the entry ends by itself; None while no entry is open."""
        return None if self._last_at is None else self._last_at + KEY_PAUSE_SECONDS

    def press(self, key: str, now: float) -> str | None:
        """One key pressed; the finished entry's turn text when it was ``#``."""
        if key == _END_KEY:
            return self._finish()
        if len(self._keys) < MAX_KEYS:
            self._keys.append(key)
        self._last_at = now
        return None

    def expire(self, now: float) -> str | None:
        """The entry's turn text once the keypad has been quiet long enough."""
        deadline = self.deadline
        if deadline is None or now < deadline:
            return None
        return self._finish()

    def _finish(self) -> str:
        keys = "".join(self._keys)
        self._keys.clear()
        self._last_at = None
        return keys_text(keys)
