"""Slow clients over real sockets: headers and a body that trickle in are cut off with
408 at their deadline (short here), while a WebSocket and a streamed answer that last
longer than both deadlines are left alone."""

from __future__ import annotations

import contextlib

import anyio
import pytest
import websockets

from app.serving import server_config
from tests.support.http import _EmbeddedServer, free_socket

pytestmark = pytest.mark.anyio

# Far longer than the deadlines below: a connection still open then was never cut off.
GIVE_UP_SECONDS = 20


@pytest.fixture
def boot(boot):
    return boot.with_values(server__header_timeout_seconds=1, server__body_timeout_seconds=1,
                            server__keep_alive_seconds=1, server__max_connections=10)


async def _until_closed(stream) -> bytes:
    received = b""
    with anyio.fail_after(GIVE_UP_SECONDS):
        while True:
            try:
                received += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
                return received


async def _connect(api):
    return await anyio.connect_tcp("127.0.0.1", api.base_url.port)


async def test_headers_that_never_finish_get_408_and_a_closed_connection(api):
    async with await _connect(api) as silent, await _connect(api) as partial:
        await partial.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        for stream in (silent, partial):
            assert (await _until_closed(stream)).startswith(b"HTTP/1.1 408 ")


async def test_a_trickled_body_gets_408_and_a_closed_connection(api):
    async with await _connect(api) as stream:
        await stream.send(b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Content-Type: application/json\r\nContent-Length: 400\r\n\r\n{")

        async def trickle() -> None:
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                for _ in range(GIVE_UP_SECONDS * 4):
                    await anyio.sleep(0.25)
                    await stream.send(b" ")

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(trickle)
            answer = await _until_closed(stream)
            tasks.cancel_scope.cancel()
    assert answer.startswith(b"HTTP/1.1 408 ")


async def test_a_kept_alive_connection_times_each_request_afresh(api):
    async with await _connect(api) as stream:
        for _ in range(2):
            await stream.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            with anyio.fail_after(GIVE_UP_SECONDS):
                assert (await stream.receive()).startswith(b"HTTP/1.1 200 ")
            await anyio.sleep(0.6)  # within the keep-alive, past half the header deadline


async def test_a_kept_alive_connection_left_idle_is_closed_quietly(api):
    async with await _connect(api) as stream:
        await stream.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        with anyio.fail_after(GIVE_UP_SECONDS):
            answer = await stream.receive()
        assert answer.startswith(b"HTTP/1.1 200 ")
        # Past the keep-alive (1 s here): closed with no word, where a request begun
        # and left unfinished gets a 408.
        assert await _until_closed(stream) == b""


async def test_a_request_answered_before_its_body_is_in_leaves_the_connection_idle(api):
    async with await _connect(api) as stream:
        await stream.send(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        received = await _until_closed(stream)  # refused unread (no key), then silence
    assert received.startswith(b"HTTP/1.1 401 ") and b" 408 " not in received


async def test_past_the_connection_limit_a_request_gets_503(api, boot):
    config = server_config(None, boot)
    assert (config.timeout_keep_alive, config.limit_concurrency) == (1, 10)
    held = [await _connect(api) for _ in range(10)]  # connected, saying nothing
    try:
        assert (await api.get("/healthz")).status_code == 503
    finally:
        for stream in held:
            await stream.aclose()
    with anyio.fail_after(GIVE_UP_SECONDS):  # once the server has seen them go
        while (await api.get("/healthz")).status_code != 200:
            await anyio.sleep(0.05)


async def _long_lived(scope, receive, send) -> None:
    """A WebSocket echo and a slowly streamed answer, each outliving both deadlines."""
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            await send({"type": message["type"] + ".complete"})
        await send({"type": "lifespan.shutdown.complete"})
    elif scope["type"] == "websocket":
        await receive()
        await send({"type": "websocket.accept"})
        while (message := await receive())["type"] == "websocket.receive":
            await send({"type": "websocket.send", "text": message["text"]})
    else:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for part in range(5):
            await anyio.sleep(0.5)
            await send({"type": "http.response.body", "body": b"%d" % part, "more_body": True})
        await send({"type": "http.response.body", "body": b""})


@contextlib.asynccontextmanager
async def _serving_long_lived(boot):
    """The port of a server of ``_long_lived`` under the short deadlines."""
    sock = free_socket()
    server = _EmbeddedServer(server_config(_long_lived, boot))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(server.serve, [sock])
        while not server.started:
            await anyio.sleep(0.005)
        try:
            yield sock.getsockname()[1]
        finally:
            server.should_exit = True
    sock.close()


async def test_websockets_and_streamed_answers_outlive_the_deadlines(boot):
    import httpx

    async with _serving_long_lived(boot) as port:
        async with websockets.connect(f"ws://127.0.0.1:{port}/media") as socket_:
            for word in ("first", "after the deadlines"):
                await socket_.send(word)
                assert await socket_.recv() == word
                await anyio.sleep(2.5)
        async with httpx.AsyncClient(timeout=GIVE_UP_SECONDS) as client:
            streamed = await client.get(f"http://127.0.0.1:{port}/stream")
        assert streamed.status_code == 200 and streamed.content == b"01234"


async def test_a_pipelined_request_is_timed_from_its_turn_not_behind_a_long_answer(boot):
    async with _serving_long_lived(boot) as port:
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            # A 2.5 s streamed answer (past the 1 s body deadline), and behind it a
            # request whose body never ends, answered without reading it.
            await stream.send(b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                              b"POST /late HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              b"Content-Length: 10\r\n\r\n{")
            received = await _until_closed(stream)
    first, _, second = received.partition(b"\r\n0\r\n\r\n")  # the first one's end
    assert first.startswith(b"HTTP/1.1 200 ") and b"408" not in first
    assert first.endswith(b"1\r\n4")  # whole: every part of the stream
    assert second.startswith(b"HTTP/1.1 200 ")  # the queued request, served in its turn
