"""The upstream calls' HTTP/1.1 client (``adapters.providers.http1``) against scripted
servers on loopback: how bodies end, when connections are kept, the pool's limit,
timeouts, and what it refuses to write."""

from __future__ import annotations

import asyncio
import gzip
import ssl
from collections.abc import Awaitable, Callable

import pytest

from adapters.providers.http1 import ConnectFailed, Connection, Http1Pool, InvalidRequest
from core.errors import RemoteProtocolError
from tests.support.listener import free_port
from tests.support.tls import self_signed

pytestmark = pytest.mark.anyio

Answer = Callable[[bytes, asyncio.StreamWriter], Awaitable[None]]


class Scripted:
    """A loopback server answering each request with ``answer(head, writer)``; it
    counts connections and keeps the request heads it read."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.connections = 0
        self.heads: list[bytes] = []
        self.writers: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Scripted:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for writer in self.writers:
            writer.close()
        self._server.close()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/models?x=1"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                head += await reader.readexactly(length)
                self.heads.append(head)
                await self.answer(head, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def answering(*parts: bytes, close: bool = False) -> Answer:
    async def answer(head: bytes, writer: asyncio.StreamWriter) -> None:
        for part in parts:
            writer.write(part)
            await writer.drain()
        if close:
            writer.close()

    return answer


OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"


async def read_all(response) -> bytes:
    parts = []
    while data := await response.readany():
        parts.append(data)
    return b"".join(parts)


async def call(pool: Http1Pool, url: str, body: bytes | None = None, *, read: float = 5):
    return await pool.request("POST" if body else "GET", url, {"Authorization": "Bearer k"},
                              body, connect_timeout=5, read_timeout=read)


async def fetch(pool: Http1Pool, url: str) -> bytes:
    """A GET's whole body, its response released after."""
    response = await call(pool, url)
    try:
        return await read_all(response)
    finally:
        response.release()


async def test_a_request_is_written_once_with_its_host_length_and_headers():
    async with Scripted(answering(OK + b"Content-Length: 2\r\n\r\n{}")) as server:
        pool = Http1Pool()
        response = await call(pool, server.url, b'{"a":1}')
        assert (response.status, response.content_type) == (200, "application/json")
        assert await read_all(response) == b"{}"
        response.release()
        await pool.close()
    head = server.heads[0]
    assert head.startswith(b"POST /v1/models?x=1 HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{server.port}\r\n".encode() in head
    assert b"Authorization: Bearer k\r\n" in head and head.endswith(b'\r\n\r\n{"a":1}')
    assert b"Content-Length: 7\r\n" in head


async def test_each_request_has_its_own_length_and_headers_however_alike_the_calls():
    async with Scripted(answering(OK + b"Content-Length: 2\r\n\r\n{}")) as server:
        pool = Http1Pool()
        for body, key in ((b"1", "k"), (b"22", "k"), (b"333", "other"), (None, "k")):
            response = await pool.request("POST" if body else "GET", server.url,
                                          {"Authorization": f"Bearer {key}"}, body,
                                          connect_timeout=5, read_timeout=5)
            await read_all(response)
            response.release()
        await pool.close()
    lengths = [head.split(b"\r\n\r\n")[0].count(b"Content-Length:") for head in server.heads]
    assert lengths == [1, 1, 1, 0]
    assert [b"Bearer other" in head for head in server.heads] == [False, False, True, False]
    assert server.heads[1].endswith(b"Content-Length: 2\r\n\r\n22")
    assert server.heads[3].startswith(b"GET ") and server.heads[3].endswith(b"\r\n\r\n")


async def test_requests_made_in_one_loop_turn_are_written_together_a_turn_later(monkeypatch):
    async with Scripted(answering(OK + b"Content-Length: 1\r\n\r\nx")) as server:
        pool = Http1Pool()
        assert await asyncio.gather(*[fetch(pool, server.url) for _ in range(3)]) == [b"x"] * 3
        bursts: list[int] = []
        write_waiting = Http1Pool._write_waiting

        def counted(self: Http1Pool) -> None:
            bursts.append(len(self._to_write))
            write_waiting(self)

        monkeypatch.setattr(Http1Pool, "_write_waiting", counted)
        calls = [asyncio.ensure_future(fetch(pool, server.url)) for _ in range(3)]
        await asyncio.sleep(0)  # each call has made its request on a kept connection...
        assert bursts == [] and server.connections == 3  # ...and none is written yet
        assert await asyncio.gather(*calls) == [b"x"] * 3
        assert bursts == [3]
        await pool.close()


@pytest.mark.parametrize("answer, close, connections", [
    (b"Content-Length: 5\r\n\r\nhello", False, 1),
    (b"Transfer-Encoding: chunked\r\n\r\n2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n", False, 1),
    # a body without a length ends with its connection, which cannot be kept
    (b"\r\nhello", True, 3),
    (b"Connection: close\r\nContent-Length: 5\r\n\r\nhello", False, 3),
], ids=["length", "chunked", "until-close", "connection-close"])
async def test_a_connection_is_kept_only_when_its_answer_allows(answer, close, connections):
    async with Scripted(answering(OK + answer, close=close)) as server:
        pool = Http1Pool()
        for _ in range(3):
            assert await fetch(pool, server.url) == b"hello"
        await pool.close()
    assert server.connections == connections


async def test_a_response_released_before_its_end_closes_its_connection():
    async with Scripted(answering(OK + b"Content-Length: 10\r\n\r\nhello")) as server:
        pool = Http1Pool()
        response = await call(pool, server.url)
        assert await response.readany() == b"hello"
        response.release()
        server.answer = answering(OK + b"Content-Length: 1\r\n\r\nx")
        assert await fetch(pool, server.url) == b"x"
        await pool.close()
    assert server.connections == 2


async def test_a_body_cut_short_is_a_connection_error_and_garbage_a_protocol_error():
    async with Scripted(answering(OK + b"Content-Length: 10\r\n\r\nhello", close=True)) as server:
        pool = Http1Pool()
        response = await call(pool, server.url)
        with pytest.raises(ConnectionError):
            await read_all(response)
        response.close()
        server.answer = answering(b"HTTP/1.1 OK nonsense\r\n\r\n")
        with pytest.raises(RemoteProtocolError):
            await call(pool, server.url)
        await pool.close()


async def test_a_server_that_closes_before_answering_is_a_connection_error():
    async with Scripted(answering(close=True)) as server:
        pool = Http1Pool()
        with pytest.raises(ConnectionError) as caught:
            await call(pool, server.url)
        assert not isinstance(caught.value, ConnectFailed)
        await pool.close()


async def test_an_idle_connection_the_server_closed_is_not_used_again():
    async with Scripted(answering(OK + b"Content-Length: 1\r\n\r\nx")) as server:
        pool = Http1Pool()
        response = await call(pool, server.url)
        await read_all(response)
        response.release()
        for writer in server.writers:
            writer.close()  # the server's keep-alive ran out
        await asyncio.sleep(0.05)  # the close reaches the client
        assert await fetch(pool, server.url) == b"x"
        await pool.close()
    assert server.connections == 2


async def test_the_pool_holds_at_most_its_limit_and_the_next_request_waits_for_one():
    async with Scripted(answering(OK + b"Content-Length: 1\r\n\r\nx")) as server:
        pool = Http1Pool(max_connections=1)
        first = await call(pool, server.url)
        second = asyncio.ensure_future(call(pool, server.url))
        await asyncio.sleep(0.05)
        assert not second.done()  # no second connection while the first is held
        await read_all(first)
        first.release()
        response = await asyncio.wait_for(second, 5)
        assert await read_all(response) == b"x"
        response.release()
        await pool.close()
    assert server.connections == 1


async def test_a_full_pool_gives_up_an_idle_connection_to_another_origin():
    async with Scripted(answering(OK + b"Content-Length: 1\r\n\r\nx")) as one, \
            Scripted(answering(OK + b"Content-Length: 1\r\n\r\ny")) as two:
        pool = Http1Pool(max_connections=1)
        response = await call(pool, one.url)
        await read_all(response)
        response.release()
        assert await fetch(pool, two.url) == b"y"
        await pool.close()


async def test_silence_past_the_read_timeout_is_a_timeout_before_and_during_the_body():
    async with Scripted(answering()) as server:
        pool = Http1Pool()
        with pytest.raises(TimeoutError):
            await call(pool, server.url, read=0.1)
        server.answer = answering(OK + b"Content-Length: 10\r\n\r\nhello")
        response = await call(pool, server.url, read=0.1)
        assert await response.readany() == b"hello"
        with pytest.raises(TimeoutError):
            await response.readany()
        response.close()
        await pool.close()


async def test_a_kept_alive_connection_times_every_wait_and_reads_after_close_fail_at_once():
    async with Scripted(answering(OK + b"Content-Length: 1\r\n\r\nx")) as server:
        pool = Http1Pool()
        for _ in range(3):  # waits that ended in time leave nothing to expire
            assert await fetch(pool, server.url) == b"x"
        assert server.connections == 1
        server.answer = answering(OK + b"Content-Length: 10\r\n\r\nhello")
        response = await call(pool, server.url, read=0.1)
        assert await response.readany() == b"hello"
        with pytest.raises(TimeoutError):  # the same connection's silence, timed afresh
            await response.readany()
        response.close()
        with pytest.raises(ConnectionResetError):
            await response.readany()  # closed: nothing more will come
        await pool.close()


async def test_a_read_waiting_in_another_task_fails_when_the_response_is_closed():
    async with Scripted(answering(OK + b"Content-Length: 10\r\n\r\nhello")) as server:
        pool = Http1Pool()
        response = await call(pool, server.url, read=60)
        assert await response.readany() == b"hello"
        reading = asyncio.ensure_future(response.readany())
        await asyncio.sleep(0.05)  # waiting for the other five bytes
        response.close()
        with pytest.raises(ConnectionResetError):
            await asyncio.wait_for(reading, 5)
        await pool.close()


async def test_a_request_whose_write_fails_fails_alone(monkeypatch):
    async with Scripted(answering(OK + b"Content-Length: 1\r\n\r\nx")) as server:
        pool = Http1Pool()
        assert await asyncio.gather(*[fetch(pool, server.url) for _ in range(2)]) == [b"x"] * 2
        write = Connection.write
        failed: list[Connection] = []

        def first_fails(self: Connection, data: bytes) -> None:
            if not failed:
                failed.append(self)
                raise OSError("the socket went away")
            write(self, data)

        monkeypatch.setattr(Connection, "write", first_fails)
        outcomes = await asyncio.gather(*[fetch(pool, server.url) for _ in range(2)],
                                        return_exceptions=True)
        assert sorted(type(outcome).__name__ for outcome in outcomes) == ["OSError", "bytes"]
        await pool.close()


async def test_a_refused_port_is_connect_failed():
    pool = Http1Pool()
    with pytest.raises(ConnectFailed):
        await call(pool, f"http://127.0.0.1:{free_port()}/v1")
    await pool.close()


@pytest.mark.parametrize("url, headers", [
    ("ftp://127.0.0.1/v1", {}),
    ("http:///v1", {}),
    ("http://127.0.0.1:abc/v1", {}),
    ("http://[::1/v1", {}),
    ("http://user:secret@127.0.0.1:9/v1", {}),
    ("http://127.0.0.1:9/v1", {"X-Evil": "a\r\nHost: elsewhere"}),
    ("http://127.0.0.1:9/v1", {"X-Evil\r\n": "a"}),
    ("http://127.0.0.1:9/v1", {"Content-Length": "0"}),
])
async def test_a_request_that_cannot_be_written_safely_is_refused_unsent(url, headers):
    pool = Http1Pool()
    with pytest.raises(InvalidRequest):
        await pool.request("GET", url, headers, None, connect_timeout=1, read_timeout=1)
    await pool.close()


async def test_a_compressed_body_is_inflated():
    packed = gzip.compress(b"hello " * 100)
    answer = OK + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(packed) + packed
    async with Scripted(answering(answer)) as server:
        pool = Http1Pool()
        response = await call(pool, server.url)
        assert await read_all(response) == b"hello " * 100
        response.release()
        await pool.close()


async def test_bytes_nobody_asked_for_make_a_connection_unusable():
    async with Scripted(answering(OK + b"Content-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\n")) as server:
        pool = Http1Pool()
        assert await fetch(pool, server.url) == b"x"
        server.answer = answering(OK + b"Content-Length: 1\r\n\r\ny")
        assert await fetch(pool, server.url) == b"y"
        await pool.close()
    assert server.connections == 2


async def test_https_checks_the_certificate(tmp_path):
    cert, key = self_signed(tmp_path)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(OK + b"Content-Length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=served)
    url = f"https://localhost:{server.sockets[0].getsockname()[1]}/v1"
    try:
        untrusting = Http1Pool()
        with pytest.raises(ConnectFailed):
            await call(untrusting, url)
        await untrusting.close()
        trusting = Http1Pool(ssl_context=ssl.create_default_context(cafile=str(cert)))
        response = await call(trusting, url)
        assert await read_all(response) == b"ok"
        response.release()
        await trusting.close()
    finally:
        server.close()
        await server.wait_closed()


async def test_an_interim_answer_is_passed_over_for_the_one_after_it():
    early = b"HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n"
    async with Scripted(answering(early + OK + b"Content-Length: 2\r\n\r\nok")) as server:
        pool = Http1Pool()
        response = await call(pool, server.url)
        assert response.status == 200 and "link" not in response.headers
        assert await read_all(response) == b"ok"
        response.release()
        assert await fetch(pool, server.url) == b"ok"  # and the connection is kept
        await pool.close()
    assert server.connections == 1


async def test_the_path_is_percent_encoded_and_a_callers_user_agent_replaces_ours():
    async with Scripted(answering(OK + b"Content-Length: 0\r\n\r\n")) as server:
        pool = Http1Pool()
        url = f"http://127.0.0.1:{server.port}/v1/a b/caf\u00e9?q=a b&r=%41"
        response = await pool.request("GET", url, {"User-Agent": "theirs"}, None,
                                      connect_timeout=5, read_timeout=5)
        response.release()
        await pool.close()
    head = server.heads[0]
    assert head.startswith(b"GET /v1/a%20b/caf%C3%A9?q=a%20b&r=%41 HTTP/1.1\r\n")
    assert b"User-Agent: theirs\r\n" in head and b"svc" not in head


async def test_waiting_for_a_free_connection_is_bounded_by_the_connect_timeout():
    async with Scripted(answering(OK + b"Content-Length: 1\r\n\r\nx")) as server:
        pool = Http1Pool(max_connections=1)
        held = await call(pool, server.url)
        with pytest.raises(TimeoutError):
            await pool.request("GET", server.url, {}, None, connect_timeout=0.1, read_timeout=5)
        await read_all(held)
        held.release()
        assert await fetch(pool, server.url) == b"x"  # the slot was not lost
        waiting = asyncio.ensure_future(call(pool, server.url))
        held = await asyncio.wait_for(waiting, 5)
        second = asyncio.ensure_future(call(pool, server.url))
        await asyncio.sleep(0.05)
        await pool.close()  # a closing pool turns its waiters away at once
        with pytest.raises(RuntimeError):
            await asyncio.wait_for(second, 5)
        held.close()
    assert server.connections == 1


async def test_a_body_that_inflates_past_the_cap_is_refused():
    packed = gzip.compress(b"\0" * (65 * 2**20), compresslevel=1)
    answer = OK + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(packed) + packed
    async with Scripted(answering(answer)) as server:
        pool = Http1Pool()
        response = await call(pool, server.url)
        with pytest.raises(RemoteProtocolError):
            await read_all(response)
        response.close()
        await pool.close()
