"""The benchmarks' OpenAI-compatible upstream, costing the shared machine next to nothing.

In the field the upstream (OpenAI, vLLM, Ollama) runs on a machine of its own; here it
shares two cores with the server under test and the load. The loopback fake
(``tests/fakes/upstream.py``, aiohttp.web) spent about as much CPU on each request as
svc did, which left the server less than half the machine. This one answers with the
same bytes (the fake's ``completion`` and ``stream_frames``, laid out once per distinct
request body and then written as they are): a bare asyncio protocol on uvloop with
httptools' parser, HTTP/1.1 keep-alive, ``Content-Length`` for JSON and chunked
transfer for streams, one write per event as a model's tokens arrive.

As a process: ``python -m benchmarks.lean_upstream --port 0 --chunks 20``; it prints
``listening on <port>`` once ready and serves until interrupted.
"""

from __future__ import annotations

__all__ = ["Answers", "serve"]

import argparse
import asyncio
import contextlib
import json
from collections.abc import Callable

import httptools

from tests.fakes.loopback import interrupted_by_stop_signals
from tests.fakes.upstream import Behaviour, completion, stream_frames

_REASONS = {200: b"OK", 400: b"Bad Request", 404: b"Not Found"}


def _head(status: int, content_type: bytes, framing: bytes) -> bytes:
    return (b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%s\r\n"
            % (status, _REASONS[status], content_type, framing))


def _whole(status: int, body: dict) -> list[bytes]:
    data = json.dumps(body).encode()
    return [_head(status, b"application/json", b"Content-Length: %d\r\n" % len(data)) + data]


def _chunked(frames: list[bytes]) -> list[bytes]:
    """The stream as writes: the head with the first event, then one event a write."""
    writes = [b"%x\r\n%s\r\n" % (len(frame), frame) for frame in frames]
    writes[0] = _head(200, b"text/event-stream", b"Cache-Control: no-cache\r\n"
                      b"Transfer-Encoding: chunked\r\n") + writes[0]
    writes[-1] += b"0\r\n\r\n"  # the end of the body goes with the last event
    return writes


class Answers:
    """The writes that answer each request, laid out once per distinct (path, body)."""

    #: distinct bodies kept; a benchmark sends a handful
    KEEP = 64

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self._laid_out: dict[tuple[bytes, bytes], list[bytes]] = {}

    def __call__(self, method: bytes, path: bytes, body: bytes) -> list[bytes]:
        key = (path, body)
        writes = self._laid_out.get(key)
        if writes is None:
            writes = self._lay_out(method, path, body)
            if len(self._laid_out) >= self.KEEP:
                self._laid_out.clear()
            self._laid_out[key] = writes
        return writes

    def _lay_out(self, method: bytes, path: bytes, body: bytes) -> list[bytes]:
        if method == b"GET" and path == b"/v1/models":
            return _whole(200, {"object": "list", "data": [
                {"id": name, "object": "model", "owned_by": "fake"}
                for name in self.behaviour.models]})
        if method != b"POST" or path != b"/v1/chat/completions":
            return _whole(404, {"error": {"message": "no such route", "type": "not_found"}})
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            return _whole(400, {"error": {"message": "the body is not a JSON object",
                                          "type": "invalid_request_error"}})
        if request.get("stream") is True:
            return _chunked(stream_frames(request, self.behaviour))
        return _whole(200, completion(request, self.behaviour))


class _Connection(asyncio.Protocol):
    """One client connection: requests parsed as they arrive, each answered in turn."""

    def __init__(self, answers: Answers) -> None:
        self._answers = answers
        self._parser = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._path = b""
        self._body: list[bytes] = []

    def connection_made(self, transport) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            self._transport.close()

    def on_url(self, url: bytes) -> None:
        self._path += url

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        transport = self._transport
        for write in self._answers(self._parser.get_method(), self._path, b"".join(self._body)):
            transport.write(write)
        self._path, self._body = b"", []
        if not self._parser.should_keep_alive():
            transport.close()


def _say_port(port: int) -> None:
    print(f"listening on {port}", flush=True)


async def serve(answers: Answers, port: int,
                ready: Callable[[int], object] = _say_port) -> None:
    """Serve on 127.0.0.1:``port`` (0: any free port) until cancelled, having given
    the port bound to ``ready`` (by default, printed for the parent process)."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Connection(answers), "127.0.0.1", port)
    ready(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default="The quick brown fox jumps over the lazy dog. " * 4)
    parser.add_argument("--chunks", type=int, default=20)
    args = parser.parse_args()
    import uvloop

    answers = Answers(Behaviour(text=args.text, chunks=args.chunks))
    # SIGTERM (how the benchmarks stop it) ends it as quietly as an interrupt does.
    interrupted_by_stop_signals()
    with contextlib.suppress(KeyboardInterrupt):
        uvloop.run(serve(answers, args.port))


if __name__ == "__main__":
    main()
