"""A loopback OpenAI-compatible upstream for tests and benchmarks.

What belongs here: an aiohttp.web server on 127.0.0.1 that answers ``GET /v1/models``
and ``POST /v1/chat/completions`` (streamed or not) the way OpenAI, vLLM or Ollama do,
and that a test can make misbehave: error statuses with OpenAI error bodies, a slow
first byte or slow chunks, a connection cut or stalled mid-stream, garbage bodies.
It records every request it receives and counts its open connections, so a test can
check what was forwarded and that a cancelled call really closed its connection.

In a test::

    async with FakeUpstream() as fake:
        fake.behaviour = Behaviour(text="Hi there", chunks=3)
        ...  # point a client at fake.base_url

As a process (for benchmarks): ``python -m tests.fakes.upstream --port 8099``; it prints
``listening on <port>`` once ready and serves until interrupted.
"""

from __future__ import annotations

__all__ = ["Behaviour", "FakeUpstream", "RecordedRequest", "ToolCall", "completion",
           "stream_frames"]

import argparse
import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from core.records import frozen
from tests.fakes.loopback import LoopbackServer, serve_as_process


@frozen
class ToolCall:
    """The function call the fake model asks for; ``arguments`` streams in pieces."""

    name: str = "get_weather"
    arguments: str = '{"city": "Paris", "unit": "celsius"}'
    id: str = "call_fake_1"


@dataclass
class Behaviour:
    """How the fake answers the next requests; tests replace it as they need."""

    text: str = "Hello from the fake upstream."
    chunks: int = 4  #: content pieces in a streamed answer
    tool_call: ToolCall | None = None  #: answer with a function call instead of text
    status: int = 200  #: a value >= 400 answers an OpenAI error body instead
    error_message: str = "The fake upstream refused the request."
    first_byte_delay: float = 0.0  #: seconds before the status line is sent
    chunk_delay: float = 0.0  #: seconds between stream events
    #: stream: after this many events, do ``interrupt`` instead of going on
    interrupt_after: int | None = None
    #: "drop" (cut the connection), "drop_mid_event" (send half the next event, then
    #: cut), "stall" (send nothing more, stay open), "end" (end the body properly but
    #: early) or "error" (an in-stream error frame, then end)
    interrupt: str = "drop"
    garbage: bytes | None = None  #: answer 200 with this body instead of the real one
    #: its content type; by default what the request asked for (stream or JSON)
    garbage_content_type: str | None = None
    not_http: bool = False  #: answer bytes that are not HTTP at all, then close
    send_done: bool = True  #: end streams with ``data: [DONE]``
    keep_alive_comments: bool = False  #: interleave ``: ping`` comments in streams
    #: answer 400 to a request carrying ``stream_options``, as strict servers do
    refuse_stream_options: bool = False
    models: tuple[str, ...] = ("fake-small", "fake-large")


@frozen
class RecordedRequest:
    """One request as the fake received it (header names in lower case)."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any
    peer: tuple[Any, ...] | None = None  #: the client's address: one per connection


@dataclass
class FakeUpstream(LoopbackServer):
    """The server; an async context manager that starts and stops it."""

    behaviour: Behaviour = field(default_factory=Behaviour)
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        #: The body bytes of the last streamed answer, exactly as written.
        self.sent = b""

    @property
    def connections_used(self) -> int:
        """How many distinct client connections the recorded requests came on."""
        return len({request.peer for request in self.requests})

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        return app

    # -- handlers ---------------------------------------------------------------

    async def _record(self, request: web.Request) -> Any:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        peer = request.transport.get_extra_info("peername") if request.transport else None
        headers = {name.lower(): value for name, value in request.headers.items()}
        self.requests.append(RecordedRequest(request.method, request.path, headers, body, peer))
        return body

    async def _models(self, request: web.Request) -> web.StreamResponse:
        await self._record(request)
        data = [{"id": name, "object": "model", "owned_by": "fake"} for name in self.behaviour.models]
        return web.json_response({"object": "list", "data": data})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request)
        behaviour = self.behaviour
        if behaviour.first_byte_delay:
            await asyncio.sleep(behaviour.first_byte_delay)
        if behaviour.not_http:
            assert request.transport is not None
            request.transport.write(b"SURPRISE! this is not HTTP\r\n\r\n")
            request.transport.close()
            raise asyncio.CancelledError  # the connection is gone: end the handler
        if behaviour.status >= 400:
            return _error_response(behaviour.status, behaviour.error_message)
        if behaviour.refuse_stream_options and isinstance(body, dict) and "stream_options" in body:
            return _error_response(400, "Unrecognized request argument supplied: stream_options")
        streamed = isinstance(body, dict) and body.get("stream") is True
        if behaviour.garbage is not None:
            content_type = behaviour.garbage_content_type or (
                "text/event-stream" if streamed else "application/json"
            )
            return web.Response(body=behaviour.garbage, content_type=content_type)
        if streamed:
            return await self._stream(request, body, behaviour)
        return web.json_response(completion(body, behaviour))

    async def _stream(
        self, request: web.Request, body: dict, behaviour: Behaviour
    ) -> web.StreamResponse:
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        self.sent = b""
        for count, frame in enumerate(stream_frames(body, behaviour)):
            if count == behaviour.interrupt_after:
                await self._interrupt(request, response, behaviour, frame)
                break
            if count and behaviour.chunk_delay:
                await asyncio.sleep(behaviour.chunk_delay)
            if behaviour.keep_alive_comments:
                await self._write(response, b": ping\n\n")
            await self._write(response, frame)
        await response.write_eof()
        return response

    async def _write(self, response: web.StreamResponse, data: bytes) -> None:
        self.sent += data
        await response.write(data)

    async def _interrupt(
        self, request: web.Request, response: web.StreamResponse, behaviour: Behaviour, frame: bytes
    ) -> None:
        if behaviour.interrupt == "drop_mid_event":
            await self._write(response, frame[: len(frame) // 2])
        if behaviour.interrupt in ("drop", "drop_mid_event"):
            assert request.transport is not None
            request.transport.abort()  # no chunked terminator: a cut, not an end
            raise asyncio.CancelledError  # nothing more may be written on this connection
        if behaviour.interrupt == "stall":
            await asyncio.Event().wait()  # until the client goes away and cancels us
        if behaviour.interrupt == "error":
            error = {"message": behaviour.error_message, "type": "server_error", "code": 503}
            await self._write(response, b"data: " + json.dumps({"error": error}).encode() + b"\n\n")


# -- answers ------------------------------------------------------------------------


class ScriptedUpstream(FakeUpstream):
    """The fake, answering each chat request with the next behaviour of ``script``
    (then keeping the last one): a tool call first, the answer after it."""

    def __init__(self, *script: Behaviour) -> None:
        super().__init__()
        self.script = list(script)

    async def _chat(self, request):
        if self.script:
            self.behaviour = self.script.pop(0)
        return await super()._chat(request)

    def chat_requests(self) -> list[Any]:
        return [r.json for r in self.requests if r.path.endswith("/chat/completions")]


def _error_response(status: int, message: str) -> web.Response:
    kind = "invalid_request_error" if status < 500 else "server_error"
    error = {"message": message, "type": kind, "param": None, "code": str(status)}
    return web.json_response({"error": error}, status=status)


def _usage(body: dict, completion_tokens: int) -> dict[str, int]:
    # Deterministic stand-in for token counts: words in, pieces out.
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    words = sum(len(str(m.get("content", "")).split()) for m in messages)
    total = words + completion_tokens
    return {"prompt_tokens": words, "completion_tokens": completion_tokens, "total_tokens": total}


def split_text(text: str, pieces: int) -> list[str]:
    """``text`` in ``pieces`` nearly equal parts (fewer when the text is shorter)."""
    pieces = max(1, min(pieces, len(text) or 1))
    size, extra = divmod(len(text), pieces)
    parts, start = [], 0
    for i in range(pieces):
        end = start + size + (1 if i < extra else 0)
        parts.append(text[start:end])
        start = end
    return parts


def answer_text(body: Any, text: str) -> str:
    """``text``, or JSON holding it when the request asked for a JSON answer: an
    object with ``answer``, or one that fills the schema's properties."""
    response_format = body.get("response_format") if isinstance(body, dict) else None
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind == "json_object":
        return json.dumps({"answer": text})
    if kind != "json_schema":
        return text
    schema = (response_format.get("json_schema") or {}).get("schema") or {}
    fillers = {"string": text, "number": 0, "integer": 0, "boolean": False}
    return json.dumps({name: fillers.get(spec.get("type") if isinstance(spec, dict) else None)
                       for name, spec in (schema.get("properties") or {}).items()})


def completion(body: Any, behaviour: Behaviour) -> dict[str, Any]:
    body = body if isinstance(body, dict) else {}
    message: dict[str, Any] = {"role": "assistant", "content": answer_text(body, behaviour.text)}
    finish_reason = "stop"
    if behaviour.tool_call is not None:
        call = behaviour.tool_call
        function = {"name": call.name, "arguments": call.arguments}
        tool_call = {"id": call.id, "type": "function", "function": function}
        message = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
        finish_reason = "tool_calls"
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": body.get("model", "fake-small"),
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "usage": _usage(body, behaviour.chunks),
    }


def stream_frames(body: dict, behaviour: Behaviour) -> list[bytes]:
    """The events of a streamed answer, as OpenAI orders them."""
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000}
    base["model"] = body.get("model")
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    if include_usage:
        base["usage"] = None  # as OpenAI does: null on every chunk but the usage one

    def frame(delta: dict | None, finish_reason: str | None = None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        chunk = {**base, "choices": [] if delta is None else [choice], **extra}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    if behaviour.tool_call is not None:
        call = behaviour.tool_call
        function = {"name": call.name, "arguments": ""}
        head = {"index": 0, "id": call.id, "type": "function", "function": function}
        frames = [frame({"role": "assistant", "content": None, "tool_calls": [head]})]
        for piece in split_text(call.arguments, behaviour.chunks):
            frames.append(frame({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
        frames.append(frame({}, "tool_calls"))
    else:
        frames = [frame({"role": "assistant", "content": ""})]
        frames += [frame({"content": piece})
                   for piece in split_text(answer_text(body, behaviour.text), behaviour.chunks)]
        frames.append(frame({}, "stop"))
    if include_usage:
        frames.append(frame(None, usage=_usage(body, behaviour.chunks)))
    if behaviour.send_done:
        frames.append(b"data: [DONE]\n\n")
    return frames


# -- as a process ---------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description="Loopback OpenAI-compatible upstream.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default="The quick brown fox jumps over the lazy dog. " * 4)
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--uvloop", action="store_true", help="serve on uvloop")
    args = parser.parse_args()
    loop_factory = None
    if args.uvloop:
        import uvloop

        loop_factory = uvloop.new_event_loop
    behaviour = Behaviour(text=args.text, chunks=args.chunks)
    serve_as_process(FakeUpstream(behaviour=behaviour, port=args.port), loop_factory)


if __name__ == "__main__":
    main()
