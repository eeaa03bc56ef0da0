"""The protocol errors every sans-IO machine in ``core`` raises.

Following h11: ``LocalProtocolError`` means we asked a machine to do something its
rules forbid (a bug on our side); ``RemoteProtocolError`` means the peer sent something
the protocol does not allow. A parser raises nothing else, whatever bytes it is fed.
"""

from __future__ import annotations

__all__ = ["ProtocolError", "LocalProtocolError", "RemoteProtocolError"]


class ProtocolError(Exception):
    """A protocol rule was broken. ``hint`` carries the reaction, e.g. a close code."""

    def __init__(self, message: str, *, hint: object = None) -> None:
        super().__init__(message)
        self.hint = hint


class LocalProtocolError(ProtocolError):
    """We misused a machine: the call is not allowed in its current state."""


class RemoteProtocolError(ProtocolError):
    """The peer misbehaved: its input breaks the protocol."""
