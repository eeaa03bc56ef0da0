"""A response's head goes out in one write with its first body bytes
(``app.http.head_with_body``): unit checks of the held transport, and real sockets for
the cases where nothing follows the head (HEAD, an interim 100 Continue, pipelining)."""

from __future__ import annotations

import anyio
import pytest

from app.http.head_with_body import HeadHeldTransport
from tests.support.transports import RecordedTransport

pytestmark = pytest.mark.anyio

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"


def test_the_head_and_the_first_body_bytes_are_one_write():
    transport = RecordedTransport()
    held = HeadHeldTransport(transport)  # type: ignore[arg-type]
    held.write(HEAD)
    assert transport.writes == []
    held.write(b"{}")
    held.write(b"more")
    assert transport.writes == [HEAD + b"{}", b"more"]


def test_an_interim_100_continue_is_written_at_once():
    transport = RecordedTransport()
    held = HeadHeldTransport(transport)  # type: ignore[arg-type]
    held.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    assert transport.writes == [b"HTTP/1.1 100 Continue\r\n\r\n"]


def test_a_head_with_nothing_after_it_goes_out_on_flush_or_close():
    transport = RecordedTransport()
    held = HeadHeldTransport(transport)  # type: ignore[arg-type]
    held.write(HEAD)
    held.flush()
    assert transport.writes == [HEAD]
    again = HeadHeldTransport(transport)  # type: ignore[arg-type]
    again.write(HEAD)
    again.close()
    assert transport.writes == [HEAD, HEAD] and transport.closed
    assert again.is_closing()  # everything else is the transport's own


async def _exchange(api, request: bytes, answers: int) -> bytes:
    """Send ``request`` raw; read until ``answers`` complete responses arrived."""
    received = b""
    with anyio.fail_after(20):
        async with await anyio.connect_tcp("127.0.0.1", api.base_url.port) as stream:
            await stream.send(request)
            while received.count(b"HTTP/1.1 2") < answers or not received.endswith(b"}"):
                received += await stream.receive()
                if request.startswith(b"HEAD") and received.endswith(b"\r\n\r\n"):
                    break
    return received


async def test_a_head_request_gets_its_head_though_no_body_follows(api):
    received = await _exchange(api, b"HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 1)
    assert received.startswith(b"HTTP/1.1 ") and received.endswith(b"\r\n\r\n")


async def test_pipelined_requests_are_answered_in_order_each_whole(api):
    one = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    received = await _exchange(api, one * 3, 3)
    assert received.count(b"HTTP/1.1 200 ") == 3


async def test_a_client_waiting_for_100_continue_gets_it_before_the_answer(api):
    body = b'{"email": "nobody@example.org", "password": "wrong-password"}'
    with anyio.fail_after(20):
        async with await anyio.connect_tcp("127.0.0.1", api.base_url.port) as stream:
            await stream.send(b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              b"Content-Type: application/json\r\nExpect: 100-continue\r\n"
                              b"Content-Length: %d\r\n\r\n" % len(body))
            interim = await stream.receive()
            assert interim.startswith(b"HTTP/1.1 100 Continue")
            await stream.send(body)
            answer = b""
            while b"\r\n\r\n" not in answer:
                answer += await stream.receive()
    assert answer.startswith(b"HTTP/1.1 4") or interim.split(b"\r\n\r\n", 1)[1].startswith(
        b"HTTP/1.1 4")


def test_the_cycle_writes_to_the_connection_itself_once_the_head_is_out():
    transport = RecordedTransport()

    class Cycle:
        pass

    cycle = Cycle()
    held = HeadHeldTransport(transport, cycle)  # type: ignore[arg-type]
    cycle.transport = held  # type: ignore[attr-defined]
    held.write(HEAD)
    assert cycle.transport is held  # the head is still held: writes must pass through it
    held.write(b"{}")
    assert cycle.transport is transport
    cycle.transport.write(b"more")
    held.flush()  # as the response ends: nothing is held any more
    assert transport.writes == [HEAD + b"{}", b"more"]
