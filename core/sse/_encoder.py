"""Writing our own ``/v1`` chat-completions answers, streamed and not.

What belongs here: the bytes of the ``chat.completion.chunk`` frames we send, the order
they may come in, and the equivalent non-streamed ``chat.completion`` object. The
route owns the clock and the id: ``created`` and ``id`` are passed in.

spec: DESIGN.md "/v1 protocol" — the first chunk carries the role, the last content
chunk carries ``finish_reason``, a usage chunk (``choices: []``) comes only when the
caller asked ``stream_options.include_usage``, then ``data: [DONE]``. Errors after the
headers are sent go out as ``data: {"error": {...}}`` frames.

The message (or the first delta) says ``refusal: null`` and every object carries the
``system_fingerprint`` it is given, as OpenAI's answers do and the SDKs' types expect.

``content()`` is the hot path: the frame around the text is rendered once, in the
constructor, so a chunk costs one JSON string encode and two concatenations.
"""

from __future__ import annotations

__all__ = ["ChunkEncoder", "EncoderState", "assemble_completion"]

import enum
import json
from collections.abc import Iterable, Mapping
from typing import Any

from core.errors import LocalProtocolError

# Compact and UTF-8: smaller frames than the default ", " and \\u escapes.
_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_json_ascii = json.JSONEncoder(separators=(",", ":"))


def _dumps(value: Any) -> bytes:
    try:
        return _json.encode(value).encode()
    except UnicodeEncodeError:
        # A lone surrogate (it can come out of an upstream's "\\ud800") has no UTF-8
        # form; the ASCII encoder writes it as an escape instead.
        return _json_ascii.encode(value).encode()


class EncoderState(enum.Enum):
    """Where a ``ChunkEncoder`` is in its answer."""

    #: Nothing sent yet; the first delta will carry ``role: assistant``.
    IDLE = "idle"
    #: Content chunks are going out.
    STREAMING = "streaming"
    #: The chunk with ``finish_reason`` went out; usage or ``[DONE]`` may follow.
    FINISHED = "finished"
    #: The usage chunk went out; only ``[DONE]`` may follow.
    USAGE_SENT = "usage_sent"
    #: An error frame went out; only ``[DONE]`` may follow.
    ERRORED = "errored"
    #: ``data: [DONE]`` went out; nothing may follow.
    DONE = "done"


class _Send(enum.Enum):
    CONTENT = "content"
    FINISH = "finish"
    USAGE = "usage"
    ERROR = "error"
    KEEP_ALIVE = "keep_alive"
    DONE = "done"


_S = EncoderState
# All transition logic lives in this table: state -> what we send -> next state.
# A pair missing from it is a bug in the caller and raises LocalProtocolError.
_TRANSITIONS: dict[EncoderState, dict[_Send, EncoderState]] = {
    _S.IDLE: {
        _Send.CONTENT: _S.STREAMING,
        _Send.FINISH: _S.FINISHED,
        _Send.ERROR: _S.ERRORED,
        _Send.KEEP_ALIVE: _S.IDLE,
    },
    _S.STREAMING: {
        _Send.CONTENT: _S.STREAMING,
        _Send.FINISH: _S.FINISHED,
        _Send.ERROR: _S.ERRORED,
        _Send.KEEP_ALIVE: _S.STREAMING,
    },
    _S.FINISHED: {
        _Send.USAGE: _S.USAGE_SENT,
        _Send.ERROR: _S.ERRORED,
        _Send.KEEP_ALIVE: _S.FINISHED,
        _Send.DONE: _S.DONE,
    },
    _S.USAGE_SENT: {_Send.KEEP_ALIVE: _S.USAGE_SENT, _Send.DONE: _S.DONE},
    _S.ERRORED: {_Send.KEEP_ALIVE: _S.ERRORED, _Send.DONE: _S.DONE},
    _S.DONE: {},
}

_KEEP_ALIVE = b": keep-alive\n\n"
_DONE = b"data: [DONE]\n\n"


class ChunkEncoder:
    """The frames of one streamed answer, in an order the protocol allows.

    Call ``content(text)`` for each piece of text, ``finish(reason)`` once, then
    ``usage(...)`` (it returns ``b""`` unless the caller asked for usage) and ``done()``.
    ``error(...)`` replaces the rest when the answer fails midway; ``keep_alive()`` may
    go out at any time before ``done()``. Each method returns the bytes to write.
    """

    def __init__(self, *, id: str, created: int, model: str, include_usage: bool = False,
                 system_fingerprint: str | None = None) -> None:
        self.id = id
        self.created = created
        self.model = model
        self.include_usage = include_usage
        self.state = EncoderState.IDLE
        self._base: dict[str, Any] = {"id": id, "object": "chat.completion.chunk",
                                      "created": created, "model": model}
        if system_fingerprint is not None:
            self._base["system_fingerprint"] = system_fingerprint
        head = _dumps(self._base)[:-1]  # the object without its closing brace
        self._head = b"data: " + head + b',"choices":[{"index":0,"delta":{'
        self._tail = b'},"logprobs":null,"finish_reason":null}]'
        self._tail += b',"usage":null}\n\n' if include_usage else b"}\n\n"

    def content(self, text: str) -> bytes:
        """A chunk with ``delta.content = text`` (the first one also carries the role)."""
        role = b'"role":"assistant","refusal":null,' if self.state is EncoderState.IDLE else b""
        self._move(_Send.CONTENT)
        return self._head + role + b'"content":' + _dumps(text) + self._tail

    def finish(
        self,
        finish_reason: str = "stop",
        *,
        content: str | None = None,
        extra: Mapping[str, Any] | None = None,
        chunk_extra: Mapping[str, Any] | None = None,
    ) -> bytes:
        """The last content chunk: ``finish_reason``, optional last text, extra delta
        fields (e.g. ``annotations``) and extra top-level fields (e.g. ``citations``)."""
        delta: dict[str, Any] = ({"role": "assistant", "refusal": None}
                                 if self.state is EncoderState.IDLE else {})
        if content is not None:
            delta["content"] = content
        delta.update(extra or {})
        self._move(_Send.FINISH)
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return self._frame({**self._base, "choices": [choice], **self._null_usage(),
                            **(chunk_extra or {})})

    def usage(self, usage: Mapping[str, Any]) -> bytes:
        """The usage chunk (``choices: []``), or ``b""`` when the caller did not ask."""
        self._move(_Send.USAGE)
        if not self.include_usage:
            return b""
        return self._frame({**self._base, "choices": [], "usage": dict(usage)})

    def error(
        self,
        message: str,
        *,
        type: str = "server_error",
        code: str | None = None,
        param: str | None = None,
    ) -> bytes:
        """An ``{"error": {...}}`` frame in the shape of our HTTP error bodies."""
        self._move(_Send.ERROR)
        error = {"message": message, "type": type, "param": param, "code": code}
        return self._frame({"error": error})

    def keep_alive(self) -> bytes:
        """A comment line: keeps proxies from closing an idle stream, clients ignore it."""
        self._move(_Send.KEEP_ALIVE)
        return _KEEP_ALIVE

    def done(self) -> bytes:
        """The ``[DONE]`` sentinel; the encoder accepts nothing after it."""
        self._move(_Send.DONE)
        return _DONE

    def _move(self, send: _Send) -> None:
        next_state = _TRANSITIONS[self.state].get(send)
        if next_state is None:
            raise LocalProtocolError(f"cannot send {send.value} in state {self.state.value}")
        self.state = next_state

    def _null_usage(self) -> dict[str, None]:
        # spec (OpenAI stream_options): with include_usage every other chunk has usage null.
        return {"usage": None} if self.include_usage else {}

    @staticmethod
    def _frame(payload: dict[str, Any]) -> bytes:
        return b"data: " + _dumps(payload) + b"\n\n"


def assemble_completion(
    *,
    id: str,
    created: int,
    model: str,
    pieces: Iterable[str],
    finish_reason: str = "stop",
    usage: Mapping[str, Any] | None = None,
    message_extra: Mapping[str, Any] | None = None,
    completion_extra: Mapping[str, Any] | None = None,
    system_fingerprint: str | None = None,
) -> dict[str, Any]:
    """The non-streamed ``chat.completion`` object for the same pieces of text.

    Built from the pieces that ``ChunkEncoder.content`` would have streamed, so a
    client gets the same text whether it asked ``stream`` or not. Serialise it with
    any JSON encoder; ``message_extra`` adds message fields such as ``annotations``,
    ``completion_extra`` top-level ones such as ``citations``.
    """
    message = {"role": "assistant", "content": "".join(pieces), "refusal": None,
               **(message_extra or {})}
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
    completion: dict[str, Any] = {
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [choice],
    }
    if system_fingerprint is not None:
        completion["system_fingerprint"] = system_fingerprint
    if usage is not None:
        completion["usage"] = dict(usage)
    completion.update(completion_extra or {})
    return completion
