"""Reading what an OpenAI-compatible upstream sends: stream chunks, bodies, errors.

What belongs here: the rules for interpreting upstream payloads once they are bytes or
``ServerSentEvent`` values — the ``[DONE]`` sentinel, chunk JSON, the error body shape,
the models list, and the running tally (finish reason, usage, in-stream error) that
usage accounting needs. The adapter does the I/O and calls these; every decoding
failure is a ``RemoteProtocolError`` so it maps to one upstream error type.
"""

from __future__ import annotations

__all__ = [
    "DONE",
    "StreamTally",
    "asking_usage",
    "decode_chat_event",
    "decode_json_object",
    "is_usage_chunk",
    "model_ids",
    "upstream_error_message",
    "usage_asked",
]

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from core import jsonfast

from core.errors import RemoteProtocolError
from core.sse._parser import ServerSentEvent, SSEParser


class _Done:
    """Type of the ``DONE`` sentinel (compare with ``is``): the stream's last event."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DONE"


#: Returned by ``decode_chat_event`` for the end-of-stream sentinel.
DONE: Final = _Done()

# A chunk whose data has none of these needs no JSON decode for accounting. Quotes in
# JSON strings are escaped, so text a model writes can never contain these literally;
# whitespace variants ("usage" : null) only cost an extra decode, never a miss.
_NULL_FINISH = ('"finish_reason":null', '"finish_reason": null')
_NULL_USAGE = ('"usage":null', '"usage": null')
# The same rules in bytes, for the whole events a read begins with (see
# observe_plain_prefix). Each ``\n\n``-ended line holds a null finish reason. A line
# is looked through once for the marker, then taken whole, and the atomic group keeps
# a failing line from retrying the lines before it: an upstream's read of one long
# line with many markers and no end costs its length, not its length squared.
_EACH_FINISH_NULL = re.compile(rb'(?>(?=[^\n]*"finish_reason": ?null)[^\n]*+\n\n)+')
_NULL_USAGE_BYTES = tuple(marker.encode() for marker in _NULL_USAGE)


def decode_json_object(data: str | bytes, what: str = "body") -> dict[str, Any]:
    """Parse ``data`` as a JSON object, or raise ``RemoteProtocolError``."""
    try:
        value = jsonfast.loads(data)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError and UnicodeDecodeError of bad bytes.
        raise RemoteProtocolError(f"upstream {what} is not valid JSON: {exc}", hint=502) from exc
    if not isinstance(value, dict):
        raise RemoteProtocolError(f"upstream {what} is not a JSON object", hint=502)
    return value


def decode_chat_event(event: ServerSentEvent) -> dict[str, Any] | _Done:
    """Decode one event of a chat-completions stream: a chunk dict or ``DONE``."""
    data = event.data
    if data == "[DONE]":
        return DONE
    return decode_json_object(data, "stream chunk")


# -- usage on streams -------------------------------------------------------------------
# An OpenAI-compatible stream carries token usage only when the request asked for it
# (``stream_options.include_usage``): one chunk near the end with no choices. To count
# tokens of a stream whose client did not ask, the request asks on its behalf and that
# chunk is left out of what the client receives.

def usage_asked(body: Mapping[str, Any]) -> bool:
    """Whether the request asks its stream to end with a usage chunk."""
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def asking_usage(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """``body`` asking for the usage chunk; None when it asks already, or says
    something else than "no" about it, or its ``stream_options`` is not an object
    (then it is forwarded as it is, for the upstream to judge)."""
    options = body.get("stream_options", {})
    if not isinstance(options, dict) or options.get("include_usage", False) not in (
            False, None):
        return None
    return {**body, "stream_options": {**options, "include_usage": True}}


def is_usage_chunk(event: ServerSentEvent) -> bool:
    """The chunk that answers ``include_usage``: a usage object and no choice."""
    data = event.data
    if '"usage"' not in data or _NULL_USAGE[0] in data or _NULL_USAGE[1] in data:
        return False  # the chunks before it carry "usage": null
    try:
        chunk = json.loads(data)
    except (ValueError, RecursionError):
        return False
    return (isinstance(chunk, dict) and isinstance(chunk.get("usage"), dict)
            and not chunk.get("choices"))


def upstream_error_message(body: bytes, status: int) -> str:
    """The human message of an upstream error answer, whatever shape it came in.

    OpenAI, vLLM and llama.cpp send ``{"error": {"message": ...}}``; Ollama's native
    API and some proxies send ``{"error": "..."}``; FastAPI-based servers send
    ``{"detail": ...}``. Anything else falls back to the start of the body text.
    """
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        for value in (error, payload.get("message"), payload.get("detail")):
            if isinstance(value, str) and value:
                return value
    text = body[:500].decode("utf-8", "replace").strip()
    return text or f"upstream answered HTTP {status}"


def model_ids(payload: dict[str, Any]) -> list[str]:
    """The ids of a ``GET /models`` answer (``{"data": [{"id": ...}, ...]}``)."""
    data = payload.get("data")
    if not isinstance(data, list):
        raise RemoteProtocolError("upstream models list has no 'data' array", hint=502)
    ids = [item.get("id") for item in data if isinstance(item, dict)]
    if len(ids) != len(data) or not all(isinstance(i, str) for i in ids):
        raise RemoteProtocolError("upstream models list has an entry without an id", hint=502)
    return ids


class StreamTally:
    """What usage accounting needs from a chat stream, gathered as it passes.

    Feed it decoded chunks (``observe``) or, on the raw relay path, the events
    themselves (``observe_event``), which decodes only the few events that can carry
    a finish reason, usage or an error. Read ``finish_reason``, ``usage``, ``error``
    and ``done`` at the end; ``complete`` says whether the stream ended properly.
    """

    __slots__ = ("done", "error", "finish_reason", "usage", "chunks")

    def __init__(self) -> None:
        self.done = False  #: the ``[DONE]`` sentinel arrived
        self.error: dict[str, Any] | None = None  #: an in-stream ``{"error": ...}``
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None  #: the last non-null ``usage``
        self.chunks = 0  #: events seen, the sentinel excluded

    @property
    def complete(self) -> bool:
        """The stream reached an end: ``[DONE]``, a finish reason or an error frame.

        Some llama.cpp builds end the body after the finishing chunk without the
        sentinel, and an upstream that fails midway ends after its error frame; a
        stream with none of these was cut short.
        """
        return self.done or self.finish_reason is not None or self.error is not None

    def observe_event(self, event: ServerSentEvent) -> None:
        """Account for one raw event without decoding the ordinary content chunks."""
        data = event.data
        if data == "[DONE]":
            self.done = True
            return
        self.chunks += 1
        if (
            (_NULL_FINISH[0] in data or _NULL_FINISH[1] in data)
            and ('"usage"' not in data or _NULL_USAGE[0] in data or _NULL_USAGE[1] in data)
            and '"error"' not in data
        ):
            return  # an ordinary content chunk: nothing to account for
        self._account(decode_json_object(data, "stream chunk"))

    def observe_plain_prefix(self, parser: SSEParser, data: bytes) -> int:
        """Account at once for the ordinary content chunks a relayed read begins with;
        how many of its bytes that was (0: none, ``len(data)``: the whole read).

        The prefix taken is whole one-line ``data: `` events (``parser`` moves past them
        unbuilt), each of which would have passed ``observe_event`` as an ordinary chunk:
        only the count changes. Feed the rest, if any, to ``parser`` and observe its
        events: a read that holds a stream's end (finish reason, usage, ``[DONE]``) has
        its content chunks counted here and only its last few events built. ASCII
        markers are found in the bytes exactly when they are in the decoded text, as
        replacement characters never swallow an ASCII byte.
        """
        # Each line of the prefix holds a null finish reason: the lines before the first
        # that does not (the finishing chunk, usage, [DONE], or anything else).
        prefix = _EACH_FINISH_NULL.match(data)
        if prefix is None:
            return 0
        end = prefix.end()
        plain = data if end == len(data) else data[:end]
        if b'"error"' in plain:
            return 0
        usages = plain.count(b'"usage"')
        if usages and usages != plain.count(_NULL_USAGE_BYTES[1]) and usages != plain.count(
                _NULL_USAGE_BYTES[0]):
            return 0  # a usage object, or nulls written both ways: let the parser see
        count = parser.skip_data_events(plain)
        if count is None:
            return 0
        self.chunks += count
        return end

    def observe(self, chunk: dict[str, Any] | _Done) -> None:
        """Account for one decoded chunk (or ``DONE``)."""
        if chunk is DONE:
            self.done = True
            return
        self.chunks += 1
        self._account(chunk)  # type: ignore[arg-type]

    def _account(self, chunk: dict[str, Any]) -> None:
        error = chunk.get("error")
        if error is not None:
            self.error = error if isinstance(error, dict) else {"message": str(error)}
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = usage
        choices = chunk.get("choices")
        if isinstance(choices, list):
            for choice in choices:
                reason = choice.get("finish_reason") if isinstance(choice, dict) else None
                if isinstance(reason, str):
                    self.finish_reason = reason
