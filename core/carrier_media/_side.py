"""What both ends of a media stream share: text in, and a protocol error that ends it.

Media Streams speaks only text; a binary message, like any message one end cannot
take, breaks the stream for good. The first such error is kept and every later read
raises it again, so the adapter closes with that error's close code whichever read
saw it first.
"""

from __future__ import annotations

__all__ = ["StreamSide"]

import abc
import enum

from ..errors import RemoteProtocolError
from ._codec import CloseCode, remote_error


class StreamSide(abc.ABC):
    """Base of ``CarrierConnection`` and ``CarrierStreamClient``: they set ``_state``
    and ``_error = None`` and name their failed state in ``_FAILED``; ``_take_text``
    reads one message, raising ``RemoteProtocolError`` for what it cannot take."""

    _FAILED: enum.Enum
    _state: enum.Enum
    _error: RemoteProtocolError | None

    def receive_text(self, text: str) -> None:
        """Feed one whole text message. Raises ``RemoteProtocolError`` whose ``hint``
        is the ``CloseCode`` to close with; later calls raise it again."""
        if self._error is not None:
            raise self._error
        try:
            self._take_text(text)
        except RemoteProtocolError as exc:
            self._state = self._FAILED
            self._error = exc
            raise

    def receive_binary(self, data: bytes) -> None:
        """A binary message: the stream carries only text, so this always fails."""
        if self._error is None:
            self._state = self._FAILED
            self._error = remote_error(
                f"binary message of {len(data)} bytes; the stream carries only text",
                CloseCode.UNSUPPORTED_DATA,
            )
        raise self._error

    @abc.abstractmethod
    def _take_text(self, text: str) -> None:
        """Read one whole text message; raise ``RemoteProtocolError`` for what this end
        cannot take."""
