"""Incremental parser for a ``text/event-stream`` body (server-sent events).

What belongs here: turning the bytes an upstream sends into ``ServerSentEvent`` values,
following the WHATWG HTML "event stream interpretation" rules, and nothing about what
the events mean (OpenAI chunks are read in ``_openai.py``).

The rules in short: lines end in CRLF, LF or CR; a blank line dispatches the event; a
line starting with ``:`` is a comment; ``field: value`` sets a field (one space after
the colon is dropped); ``data`` lines accumulate joined by ``\\n``; an event with no
data is not dispatched; a BOM is allowed at the very start; whatever is pending when
the stream ends is discarded.

The parser works on bytes and decodes only the finished data of an event: CR and LF
never occur inside a UTF-8 multi-byte sequence, so splitting lines before decoding
gives the same result as the spec's decode-then-split, and it skips a decode per line.
"""

from __future__ import annotations

__all__ = ["MAX_EVENT_BYTES", "SSEParser", "ServerSentEvent"]

from typing import NoReturn

from core.errors import RemoteProtocolError
from core.records import frozen

#: Default cap on the bytes one event may buffer (its data lines plus the line being
#: read). An upstream that never sends a line end must not grow our memory forever.
MAX_EVENT_BYTES = 1024 * 1024

_BOM = b"\xef\xbb\xbf"


@frozen
class ServerSentEvent:
    """One dispatched event: its type, its data, and the stream's last event id."""

    #: The ``event:`` field, ``"message"`` when the event did not set one.
    event: str
    #: The ``data:`` lines joined by ``\n``.
    data: str
    #: The last ``id:`` seen on the stream so far (it persists across events), or None.
    id: str | None = None
    #: The ``retry:`` value set within this event, in milliseconds, or None.
    retry: int | None = None

    def encode(self) -> bytes:
        """The event written as a stream carries it: ``SSEParser`` reads these bytes
        back as this same event (the ``id`` repeated, as it persisted)."""
        lines = [] if self.event == "message" else [f"event: {self.event}"]
        if self.id is not None:
            lines.append(f"id: {self.id}")
        if self.retry is not None:
            lines.append(f"retry: {self.retry}")
        lines += [f"data: {line}" for line in self.data.split("\n")]
        return ("\n".join(lines) + "\n\n").encode()


class SSEParser:
    """Feed it bytes as they arrive; it returns the events they complete.

    ``feed(data)`` returns a list of ``ServerSentEvent``; ``feed_eof()`` ends the stream
    and reports whether an unfinished event was dropped. A peer that breaks the limits
    raises ``RemoteProtocolError``, and the parser stays broken afterwards; no other
    exception comes out of it, whatever the bytes.
    """

    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self._max_event_bytes = max_event_bytes
        self._buffer = b""  # bytes of a line not yet ended
        self._at_start = True  # a BOM may still be coming
        self._skip_lf = False  # the last chunk ended in CR: a leading LF belongs to it
        self._data: list[bytes] = []
        self._data_size = 0
        self._event_type = b""
        self._last_id: str | None = None
        self._retry: int | None = None
        self._broken: RemoteProtocolError | None = None
        self._pending = 0  # input bytes since the parser was last between events

    @property
    def last_event_id(self) -> str | None:
        """The last ``id:`` field seen; a reconnecting client would send it back."""
        return self._last_id

    @property
    def pending_bytes(self) -> int:
        """How many of the bytes fed last belong to an event not yet complete.

        A relay that forwards only the bytes before these never leaves its reader
        mid-event, so it can always append a frame of its own (an error, say).
        """
        return self._pending

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        """Add bytes from the stream; return the events they complete, in order."""
        if self._broken is not None:
            raise self._broken
        if self._at_start and data and not self._buffer and data[:1] != _BOM[:1]:
            # No BOM can come: a stream's first chunk (often the whole of a short
            # stream) may take the fast path too.
            self._at_start = False
        if data[-2:] == b"\n\n" and self._clean() and b"\r" not in data:
            return self._feed_whole_events(data)
        self._pending += len(data)
        if self._skip_lf and data:
            self._skip_lf = False
            if data[:1] == b"\n":
                data = data[1:]
        buffer = self._buffer + data if self._buffer else bytes(data)
        if self._at_start:
            if len(buffer) < len(_BOM) and _BOM.startswith(buffer):
                self._buffer = buffer  # could still become a BOM: wait for more
                return []
            self._at_start = False
            if buffer.startswith(_BOM):
                buffer = buffer[len(_BOM) :]
        lines = buffer.splitlines(keepends=True)
        # bytes.splitlines splits on exactly CR, LF and CRLF, the spec's line ends.
        unended = b""
        if lines and lines[-1][-1:] not in (b"\n", b"\r"):
            unended = lines.pop()
        else:
            # Only a chunk that ends in CR may have its CRLF split by the next chunk; a
            # CR followed by an unfinished line in this chunk has no LF to wait for.
            self._skip_lf = bool(lines) and lines[-1].endswith(b"\r")
        # The unended line is kept only once the ended ones are read: while they are,
        # an event's size is its own, not its own plus the start of the next one's.
        self._buffer = b""
        events: list[ServerSentEvent] = []
        position = 0
        for line in lines:
            position += len(line)
            event = self._line(line.rstrip(b"\r\n"))
            if event is not None:
                events.append(event)
            if not (self._data or self._event_type):
                self._pending = len(buffer) - position  # between events after this line
        self._buffer = unended
        self._check_size()
        return events

    def _clean(self) -> bool:
        """Between events (no field of the next one read yet, a ``retry`` included),
        past the BOM, no CR pending: the fast path may run."""
        return not (self._buffer or self._data or self._event_type or self._at_start
                    or self._skip_lf or self._retry is not None)

    def _feed_whole_events(self, data: bytes) -> list[ServerSentEvent]:
        """The fast path for the usual chunk: whole events, LF line ends.

        A block that is a single ``data: `` line becomes an event directly; any other
        block goes through the general line rules. Same results, a third of the work.
        """
        events: list[ServerSentEvent] = []
        for block in data[:-2].split(b"\n\n"):
            if block[:6] == b"data: " and b"\n" not in block:
                if len(block) - 5 > self._max_event_bytes:  # as _check_size counts it
                    self._fail_too_big()
                events.append(ServerSentEvent("message", block[6:].decode("utf-8", "replace"), self._last_id))
                continue
            for line in block.split(b"\n"):
                event = self._line(line)
                if event is not None:
                    events.append(event)
            event = self._dispatch()
            if event is not None:
                events.append(event)
        self._pending = 0
        return events

    def skip_data_events(self, data: bytes) -> int | None:
        """Move past a chunk of plain events without building them; how many it held.

        A plain chunk is whole events, each a single ``data: `` line ended by ``\\n\\n``,
        no CR, none over the size cap, read from between events with no byte pending:
        ``feed`` would only have returned those events, and left nothing else changed.
        A relay that needs no more than their count (and has looked at their bytes
        itself) saves building them. Any other chunk returns None, and must be fed.
        """
        newlines = data.count(b"\n")
        events = newlines // 2
        if not (
            data[:6] == b"data: " and data[-2:] == b"\n\n" and not newlines % 2
            # every LF is in a pair that ends the chunk or comes before a data line,
            # so each event is one line (one event: its pair is the chunk's end)
            and (events == 1 or data.count(b"\n\ndata: ") == events - 1)
            and b"\r" not in data
            # the longest event is shorter than the chunk; _feed_whole_events counts
            # an event's size from its fifth byte on
            and len(data) - 7 <= self._max_event_bytes
            and self._broken is None
        ):
            return None
        if self._at_start and not self._buffer:
            self._at_start = False  # "d" cannot begin a BOM
        # A pending byte between events is the LF of a CRLF cut after its CR: a relay
        # holds it back, to go out before this chunk.
        if not self._clean() or self._pending:
            return None
        return events

    def feed_eof(self) -> bool:
        """End the stream. True when an unfinished event was discarded (spec rule)."""
        if self._broken is not None:
            raise self._broken
        pending = bool(self._data or self._buffer)
        self._buffer = b""
        self._reset_event()
        return pending

    def _line(self, line: bytes) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(b"data:"):
            # The hot path: OpenAI-style streams are almost only ``data:`` lines.
            value = line[6:] if line[5:6] == b" " else line[5:]
            self._data.append(value)
            self._data_size += len(value) + 1
            self._check_size()
            return None
        if line[:1] == b":":
            return None  # a comment, e.g. a keep-alive
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        self._field(name, value)
        return None

    def _field(self, name: bytes, value: bytes) -> None:
        if name == b"data":  # "data" without a colon: an empty data line
            self._data.append(value)
            self._data_size += len(value) + 1
        elif name == b"event":
            self._event_type = value
        elif name == b"id":
            if b"\x00" not in value:  # spec: an id containing NUL is ignored
                self._last_id = value.decode("utf-8", "replace")
        elif name == b"retry":
            if value and value.isdigit():  # spec: ASCII digits only, else ignored
                self._retry = int(value)
        # Any other field name is ignored, as the spec says.

    def _dispatch(self) -> ServerSentEvent | None:
        if not self._data:
            self._reset_event()  # spec: no data, no event; the type is reset too
            return None
        data = b"\n".join(self._data).decode("utf-8", "replace")
        event_type = self._event_type.decode("utf-8", "replace") or "message"
        event = ServerSentEvent(event_type, data, self._last_id, self._retry)
        self._reset_event()
        return event

    def _reset_event(self) -> None:
        self._data = []
        self._data_size = 0
        self._event_type = b""
        self._retry = None

    def _check_size(self) -> None:
        if self._data_size + len(self._buffer) > self._max_event_bytes:
            self._fail_too_big()

    def _fail_too_big(self) -> NoReturn:
        self._broken = RemoteProtocolError(
            f"server-sent event larger than {self._max_event_bytes} bytes", hint=502
        )
        self._buffer = b""
        self._reset_event()
        raise self._broken
