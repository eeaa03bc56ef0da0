"""The two ways to consume a streamed upstream answer: parsed chunks or raw bytes.

What belongs here: the read loop over an open response — read bytes, feed the
core's ``SSEParser``, hand out what the caller asked for, keep the ``StreamTally`` —
and the end-of-stream check. Opening and closing the response is the client's job
(``client.py``); these objects only read from it.

- ``ChunkStream`` yields each chunk as a dict (agent pipelines read the text).
- ``RawRelay`` yields the upstream's bytes unchanged (passthrough writes them straight
  to our client) while still noting finish reason and usage for accounting; the
  usage chunk is left out when it was asked for on the client's behalf.
"""

from __future__ import annotations

__all__ = ["ChunkStream", "RawRelay"]

from collections import deque
from collections.abc import Callable
from typing import Any

from adapters.providers.errors import UpstreamProtocolError, UpstreamStatusError, map_exceptions
from adapters.providers.http1 import Response
from core.sse import DONE, SSEParser, StreamTally, decode_chat_event, is_usage_chunk


class _EventStreamReader:
    """What both consumers share: reading the body and judging how it ended."""

    def __init__(self, response: Response, upstream: str, max_event_bytes: int) -> None:
        self._response = response
        self._upstream = upstream
        self._parser = SSEParser(max_event_bytes)
        self._ended = False
        #: Finish reason, usage, in-stream error and ``[DONE]``, as seen so far.
        self.tally = StreamTally()

    @property
    def usage(self) -> dict[str, Any] | None:
        """The upstream's ``usage`` object, once its usage chunk has passed (or None)."""
        return self.tally.usage

    @property
    def finish_reason(self) -> str | None:
        return self.tally.finish_reason

    async def _read(self) -> bytes:
        """The next bytes of the body, or ``b""`` once it ended properly.

        A body that ends before the stream's last chunk raises ``UpstreamProtocolError``;
        a connection that breaks raises ``UpstreamDisconnected``.
        """
        if self._ended:
            return b""
        with map_exceptions(self._upstream, answering=True):
            data = await self._response.readany()
            if data:
                return data
            self._ended = True
            self._parser.feed_eof()
        if not self.tally.complete:
            raise UpstreamProtocolError("stream ended before its last chunk", upstream=self._upstream)
        return b""


class ChunkStream(_EventStreamReader):
    """Async iterator of the chunk dicts of a streamed answer, ``[DONE]`` excluded.

    An in-stream ``{"error": ...}`` frame raises ``UpstreamStatusError``. Read
    ``usage`` and ``finish_reason`` after the loop.
    """

    def __init__(self, response: Response, upstream: str, max_event_bytes: int) -> None:
        super().__init__(response, upstream, max_event_bytes)
        self._pending: deque[dict[str, Any]] = deque()

    def __aiter__(self) -> ChunkStream:
        return self

    async def __anext__(self) -> dict[str, Any]:
        while not self._pending:
            if self.tally.done:
                await self._drain()
                raise StopAsyncIteration
            data = await self._read()
            if not data:
                raise StopAsyncIteration
            self._decode(data)
        chunk = self._pending.popleft()
        if "error" in chunk:
            raise _stream_error(chunk["error"], self._upstream)
        return chunk

    def _decode(self, data: bytes) -> None:
        with map_exceptions(self._upstream, answering=True):
            for event in self._parser.feed(data):
                chunk = decode_chat_event(event)
                self.tally.observe(chunk)
                if chunk is DONE:
                    return  # anything after the sentinel is not part of the answer
                self._pending.append(chunk)  # type: ignore[arg-type]

    async def _drain(self) -> None:
        # Reading to the end of the body lets its connection go back to the pool;
        # stopping at [DONE] would leave the chunked terminator unread and cost a new
        # connection on the next call.
        while await self._read():
            pass


class RawRelay(_EventStreamReader):
    """Async iterator of the upstream's body bytes, unchanged, in whole events.

    Comments, keep-alives, ``[DONE]`` and in-stream error frames all pass through;
    only a broken connection, a broken event stream or a body cut short raise. Bytes
    are handed out only up to the end of the last complete event (upstreams write
    whole events, so this rarely holds anything back): when the upstream fails
    midway, the caller can append its own error frame to a clean stream. After the
    loop, ``usage``, ``finish_reason`` and ``tally.error`` are what accounting needs.
    Bytes that may hold an error frame pass through ``redact`` first: an upstream may
    quote the key it was sent there too.
    """

    def __init__(self, response: Response, upstream: str, max_event_bytes: int,
                 *, hide_usage: bool = False,
                 redact: Callable[[bytes], bytes] | None = None) -> None:
        super().__init__(response, upstream, max_event_bytes)
        self._held = b""  # bytes of an event not yet complete
        #: leave the usage chunk out (asked for on the client's behalf, not by it)
        self._hide_usage = hide_usage
        self._redact = redact

    def __aiter__(self) -> RawRelay:
        return self

    async def __anext__(self) -> bytes:
        while True:
            data = await self._read()
            if not data:
                held, self._held = self._held, b""
                if held:  # trailing bytes after the last event: relay them too
                    return held
                raise StopAsyncIteration
            taken = self.tally.observe_plain_prefix(self._parser, data)
            if taken == len(data):
                return data  # the usual read: content chunks only, nothing held back
            plain = b""  # content chunks before the stream's end: counted, not built
            if taken:
                plain, data = data[:taken], data[taken:]
            with map_exceptions(self._upstream, answering=True):
                events = self._parser.feed(data)
                for event in events:
                    self.tally.observe_event(event)
            if self._held:
                data = self._held + data
            pending = self._parser.pending_bytes
            data, self._held = (data, b"") if pending == 0 else (data[:-pending], data[-pending:])
            if self._hide_usage and any(is_usage_chunk(event) for event in events):
                # Written again from the events (comments among them are dropped).
                data = b"".join(event.encode() for event in events if not is_usage_chunk(event))
            if self._redact is not None and b'"error"' in data:
                data = self._redact(data)
            if plain:
                data = plain + data
            if data:
                return data

    def opening_error(self) -> UpstreamStatusError | None:
        """The upstream's refusal when all it streamed so far is one error frame: an
        answer that failed before it began, which deserves an HTTP status."""
        if self.tally.error is None or self.tally.chunks != 1:
            return None
        return _stream_error(self.tally.error, self._upstream)


def _stream_error(error: Any, upstream: str) -> UpstreamStatusError:
    """The exception for an ``{"error": ...}`` frame sent after a 200 status."""
    error = error if isinstance(error, dict) else {"message": str(error)}
    code = error.get("code")
    # vLLM puts the HTTP status it would have used in "code"; OpenAI puts a word there.
    status = code if isinstance(code, int) and 400 <= code <= 599 else 500
    message = str(error.get("message") or "upstream reported an error mid-stream")
    return UpstreamStatusError(status, message, upstream=upstream)
