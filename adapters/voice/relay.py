"""Caller audio handed from a stream's read callback to the session, at the ticker's ring.

A connection that reads in a callback (``frame_stream.FrameStream.hand_over``) lets
its caller audio reach the session without waking a task per frame: ``HandOver``
takes each chunk in the read callback, has it parsed there (``read``), and holds the
audio and keys that came until the shared ticker's next ring (``Defers.defer``), when
every call's frame has gone out; then they go to ``on_audio`` and ``on_key`` in the
order they came. Read callbacks thus stay short, and a burst of them never holds a
tick up.

The hand-over ends at the first chunk that brings anything but audio and keys (a
hangup, an error, a broken protocol: ``read`` says so), at the end of the stream
(``b""``), or when the session itself fails taking the audio; what was held before
it is given first. The transport then takes over what ended it by reading as usual.
"""

from __future__ import annotations

__all__ = ["Defers", "HandOver", "HandsOver", "ReadChunk"]

from collections.abc import Callable
from typing import Protocol

import anyio

from adapters.voice.transport import hand_on

#: Parses one chunk read and hands the audio and keys that lead what it brought to the
#: function given; True when nothing else came (the hand-over goes on).
ReadChunk = Callable[[bytes, Callable[[bytes | str], None]], bool]


class HandsOver(Protocol):
    """A stream that gives what it reads to a receiver in its read callback."""

    def hand_over(self, receiver: Callable[[bytes], None] | None) -> list[bytes]:
        """From now on give every chunk read to ``receiver`` (``b""`` once the peer
        closed); None takes it back. Returns what was read before and not yet taken."""
        ...


class Defers(Protocol):
    """The shared ticker, as far as the hand-over needs it."""

    def defer(self, work: Callable[[], None]) -> None:
        """Run ``work`` at the next ring, once every call's frame has gone out."""
        ...


class HandOver:
    """One call's caller audio, from ``source``'s read callback to the session."""

    def __init__(self, source: HandsOver, ticker: Defers, read: ReadChunk,
                 on_audio: Callable[[bytes], None], on_key: Callable[[str], None]) -> None:
        self._source = source
        self._ticker = ticker
        self._read = read
        self._on_audio = on_audio
        self._on_key = on_key
        self._stopped = anyio.Event()
        self._stopping = False  # ``_stopped`` is set or being set: read at every chunk
        self._failure: BaseException | None = None  # raised in the session's task
        self._held: list[bytes | str] = []  # audio and keys read since the last ring
        self._hold = self.hold  # bound once: given with every chunk read

    def deliver(self, item: bytes | str) -> None:
        """Give one piece of audio or one key to the session now."""
        hand_on(item, self._on_audio, self._on_key)

    async def run(self) -> None:
        """Hand over until it ends (the module's docstring) or the caller is
        cancelled; raises what the session raised taking the audio."""
        for data in self._source.hand_over(self.take):
            self.take(data)
        try:
            await self._stopped.wait()
        finally:
            if not self._stopping:  # the call ended first: nothing more goes
                self._stopping = True
                self._held.clear()
                self._source.hand_over(None)
        if self._failure is not None:
            raise self._failure

    def take(self, data: bytes) -> None:
        """The stream's read callback: one chunk read, ``b""`` at the end."""
        if self._stopping:
            return
        try:
            # The end of the stream is left to the transport's reading: it tells a
            # close (a hangup) from a reset (a broken connection).
            if data and self._read(data, self._hold):
                return
        except BaseException as exc:
            self._fail(exc)
        self.give()
        self.stop()

    def hold(self, item: bytes | str) -> None:
        """Keep ``item`` for the next ring (asking for one as the first comes)."""
        if not self._held:
            self._ticker.defer(self.give)
        self._held.append(item)

    def give(self) -> None:
        """Everything held, to the session, in the order it came."""
        items, self._held = self._held, []
        on_audio, on_key = self._on_audio, self._on_key
        try:
            for item in items:
                hand_on(item, on_audio, on_key)
        except BaseException as exc:  # the session's own fault: raised in its task
            self._fail(exc)
            self.stop()

    def stop(self) -> None:
        """Take the stream back: nothing more is handed over."""
        if not self._stopping:
            self._stopping = True
            self._source.hand_over(None)
            self._stopped.set()

    def _fail(self, exc: BaseException) -> None:
        if self._failure is None:
            self._failure = exc
