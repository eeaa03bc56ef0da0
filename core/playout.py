"""What the caller's earpiece plays: the line's audio taken out in real time.

A telephone network plays what the service sends at the rate of the call, however
fast it arrived: audio is queued and one 20 ms frame leaves the queue per frame of
the call. A carrier's stream also carries marks (spec: DESIGN.md "Carrier"; Twilio
Media Streams): a mark queued behind audio comes back once that audio has played,
and a ``clear`` discards the queued audio and returns every mark still waiting.

``Playout`` is that queue, sans-IO: the adapter calls ``take`` once per frame of the
call (it keeps the clock) and writes what comes out where the caller would hear it.
An empty queue plays silence, so the timeline of what was heard stays the call's.
"""

from __future__ import annotations

__all__ = ["Played", "Playout"]

from collections import deque

from .records import frozen


@frozen
class Played:
    """One frame of the call as heard: ``audio`` (silence where nothing was queued),
    how many of its first bytes were the line's (``line_bytes``; the rest is the
    silence of an empty queue), and the marks its playing reached, oldest first."""

    audio: bytes
    line_bytes: int
    marks: tuple[str, ...] = ()

    @property
    def from_line(self) -> bool:
        return self.line_bytes > 0

    @property
    def line_audio(self) -> bytes:
        """Only what the line sent, without the silence of an empty queue."""
        return self.audio[:self.line_bytes]


class Playout:
    """A queue of the line's audio and marks, played out ``frame_bytes`` at a time.

    ``silence`` is the one-byte pattern of silence in the queue's encoding: ``b"\\xff"``
    for μ-law, ``b"\\x00"`` for signed linear audio.
    """

    def __init__(self, frame_bytes: int, silence: bytes) -> None:
        if frame_bytes <= 0 or len(silence) != 1:
            raise ValueError("a frame is a positive number of bytes; silence is one byte")
        self.frame_bytes = frame_bytes
        self._silence = silence
        # Items are audio (bytes) or a mark name (str), in the order they were queued.
        self._items: deque[bytes | str] = deque()
        self._queued_bytes = 0

    @property
    def queued_bytes(self) -> int:
        """Audio waiting to be played."""
        return self._queued_bytes

    def push_audio(self, audio: bytes) -> None:
        """Queue audio behind what is already waiting."""
        if audio:
            self._items.append(bytes(audio))
            self._queued_bytes += len(audio)

    def push_mark(self, name: str) -> None:
        """Queue a mark: ``take`` reports it once the audio before it has played."""
        self._items.append(name)

    def clear(self) -> list[str]:
        """Discard the queued audio; return the marks that were waiting, oldest first
        (the carrier returns them at once)."""
        marks = [item for item in self._items if isinstance(item, str)]
        self._items.clear()
        self._queued_bytes = 0
        return marks

    def drain(self) -> bytes:
        """All the audio still queued, at once (the line ended the call and what it
        had sent still reaches the caller); waiting marks are dropped."""
        audio = b"".join(item for item in self._items if isinstance(item, bytes))
        self._items.clear()
        self._queued_bytes = 0
        return audio

    def take(self) -> Played:
        """Play one frame: the next ``frame_bytes`` of queued audio, padded with
        silence when the queue runs dry, and the marks reached on the way."""
        audio = bytearray()
        marks: list[str] = []
        while self._items and len(audio) < self.frame_bytes:
            item = self._items[0]
            if isinstance(item, str):
                marks.append(item)
                self._items.popleft()
                continue
            wanted = self.frame_bytes - len(audio)
            audio += item[:wanted]
            if len(item) > wanted:
                self._items[0] = item[wanted:]
            else:
                self._items.popleft()
        # A mark right behind the frame's last byte has been reached too.
        while self._items and isinstance(self._items[0], str):
            marks.append(self._items.popleft())  # type: ignore[arg-type]
        line_bytes = len(audio)
        self._queued_bytes -= line_bytes
        audio += self._silence * (self.frame_bytes - line_bytes)
        return Played(bytes(audio), line_bytes, tuple(marks))
