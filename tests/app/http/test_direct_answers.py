"""The direct routes answered by ``svc serve``'s protocol itself
(``app.http.direct_answers``): the bytes written for a cycle, checked against what
uvicorn's own ``send`` writes for the same response. The real server taking that
path: ``tests/app/public_api/test_served_directly.py``."""

from __future__ import annotations

import asyncio
import logging

import pytest
from blacksheep import Response
from blacksheep.contents import Content, StreamedContent
from blacksheep.scribe import send_asgi_response
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

from app.http.direct_answers import write_response
from tests.support.transports import RecordedTransport

pytestmark = pytest.mark.anyio


def _cycle(transport: RecordedTransport, *, keep_alive: bool = True, method: str = "POST"
           ) -> tuple[RequestResponseCycle, list[str]]:
    ended: list[str] = []
    cycle = RequestResponseCycle(
        scope={"type": "http", "method": method, "http_version": "1.1"},  # type: ignore[arg-type]
        transport=transport, flow=FlowControl(transport),  # type: ignore[arg-type]
        logger=logging.getLogger("test"), access_logger=logging.getLogger("test"),
        access_log=False, default_headers=[(b"server", b"uvicorn")],
        message_event=asyncio.Event(), expect_100_continue=False, keep_alive=keep_alive,
        on_response=lambda: ended.append("ended"))
    return cycle, ended


def _json(status: int = 200, body: bytes = b'{"ok":true}') -> Response:
    response = Response(status, [(b"X-Request-Id", b"abc")],
                        Content(b"application/json", body))
    return response


def _json_with(name: bytes, value: bytes) -> Response:
    response = _json()
    response.add_header(name, value)
    return response


async def _stream(*parts: bytes) -> Response:
    async def generate():
        for part in parts:
            yield part

    return Response(200, [(b"cache-control", b"no-cache")],
                    StreamedContent(b"text/event-stream", generate))


async def _as_uvicorn_writes(response: Response, keep_alive: bool = True) -> bytes:
    """All the bytes uvicorn's ASGI ``send`` writes for ``response``."""
    transport = RecordedTransport()
    cycle, _ = _cycle(transport, keep_alive=keep_alive)
    await send_asgi_response(response, cycle.send)
    return b"".join(transport.writes)


async def test_a_json_answer_is_one_write_of_the_bytes_uvicorn_would_write():
    transport = RecordedTransport()
    cycle, ended = _cycle(transport)
    await write_response(cycle, transport, _json())  # type: ignore[arg-type]
    assert len(transport.writes) == 1
    assert transport.writes[0] == await _as_uvicorn_writes(_json())
    assert cycle.response_complete and ended == ["ended"] and not transport.closed


async def test_a_stream_is_chunked_its_head_going_out_with_the_first_part():
    transport = RecordedTransport()
    cycle, ended = _cycle(transport)
    await write_response(cycle, transport,  # type: ignore[arg-type]
                         await _stream(b"data: 1\n\n", b"", b"data: 2\n\n"))
    head, _, first = transport.writes[0].partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head and first == b"9\r\ndata: 1\n\n\r\n"
    assert transport.writes[1:] == [b"9\r\ndata: 2\n\n\r\n", b"0\r\n\r\n"]
    assert b"".join(transport.writes) == await _as_uvicorn_writes(
        await _stream(b"data: 1\n\n", b"data: 2\n\n"))
    assert ended == ["ended"]


async def test_a_stream_with_no_parts_is_its_head_and_the_last_chunk_at_once():
    transport = RecordedTransport()
    cycle, _ = _cycle(transport)
    await write_response(cycle, transport, await _stream())  # type: ignore[arg-type]
    assert len(transport.writes) == 1 and transport.writes[0].endswith(b"\r\n\r\n0\r\n\r\n")


async def test_a_cycle_not_kept_alive_says_close_and_closes():
    transport = RecordedTransport()
    cycle, ended = _cycle(transport, keep_alive=False)
    await write_response(cycle, transport, _json())  # type: ignore[arg-type]
    assert b"connection: close\r\n" in transport.writes[0]
    assert transport.writes[0] == await _as_uvicorn_writes(_json(), keep_alive=False)
    assert transport.closed and ended == ["ended"]


async def test_a_handler_saying_close_ends_the_connection_after_the_answer():
    transport = RecordedTransport()
    cycle, _ = _cycle(transport)
    await write_response(cycle, transport,  # type: ignore[arg-type]
                         _json_with(b"Connection", b"keep-alive, Close"))
    assert transport.writes[0].count(b"connection:") == 1 and transport.closed


async def test_nothing_is_written_once_the_client_has_gone():
    transport = RecordedTransport()
    cycle, ended = _cycle(transport)
    cycle.disconnected = True
    await write_response(cycle, transport, await _stream(b"a", b"b"))  # type: ignore[arg-type]
    assert transport.writes == [] and ended == [] and not cycle.response_complete


@pytest.mark.parametrize("value", [b"a\r\nset-cookie: x=1", b"a\nb", b"a\rb", b"a\x00b",
                                   b"a\x1bb", b"a\x7fb", b"a\n\rb"])
async def test_a_header_value_that_would_split_the_response_is_refused(value):
    transport = RecordedTransport()
    cycle, _ = _cycle(transport)
    with pytest.raises(RuntimeError, match="header value"):
        await write_response(cycle, transport, _json_with(b"x-echo", value))  # type: ignore[arg-type]
    assert transport.writes == [] and not cycle.response_started


async def test_a_tab_in_a_header_value_is_written_as_uvicorn_writes_it():
    transport = RecordedTransport()
    cycle, _ = _cycle(transport)
    await write_response(cycle, transport, _json_with(b"x-echo", b"a\tb"))  # type: ignore[arg-type]
    assert transport.writes == [await _as_uvicorn_writes(_json_with(b"x-echo", b"a\tb"))]


@pytest.mark.parametrize("name", [b"x echo", b"x:echo", b"", b"x\x7fecho"])
async def test_a_header_name_that_is_not_a_token_is_refused(name):
    transport = RecordedTransport()
    cycle, _ = _cycle(transport)
    with pytest.raises(RuntimeError, match="header name"):
        await write_response(cycle, transport, _json_with(name, b"1"))  # type: ignore[arg-type]


def _streamed(generate, length: int = -1) -> Response:
    return Response(200, None, StreamedContent(b"text/event-stream", generate, length))


async def test_a_stream_failing_before_its_first_part_has_not_started_the_response():
    async def failing():
        raise RuntimeError("upstream gone")
        yield b""  # an async generator

    transport = RecordedTransport()
    cycle, ended = _cycle(transport)
    with pytest.raises(RuntimeError, match="upstream gone"):
        await write_response(cycle, transport, _streamed(failing))  # type: ignore[arg-type]
    assert transport.writes == [] and not cycle.response_started and ended == []


@pytest.mark.parametrize(("declared", "refusal", "written"), [
    (5, "longer", b"01234"), (20, "shorter", b"0123456789")])
async def test_a_stream_of_declared_length_must_be_that_long(declared, refusal, written):
    async def ten_bytes():
        yield b"01234"
        yield b"56789"

    transport = RecordedTransport()
    cycle, ended = _cycle(transport)
    with pytest.raises(RuntimeError, match=refusal):
        await write_response(cycle, transport,  # type: ignore[arg-type]
                             _streamed(ten_bytes, declared))
    assert b"".join(transport.writes).endswith(b"\r\n\r\n" + written) and ended == []


async def test_the_routes_generator_is_closed_when_a_waiting_write_is_cancelled():
    closed = asyncio.Event()

    async def parts():
        try:
            yield b"first"
            yield b"second"
        finally:
            closed.set()

    transport = RecordedTransport()
    cycle, ended = _cycle(transport)
    cycle.flow.pause_writing()  # the client reads nothing: the next write waits
    writing = asyncio.ensure_future(write_response(cycle, transport,  # type: ignore[arg-type]
                                                   _streamed(parts)))
    await asyncio.sleep(0.01)
    assert not writing.done()
    writing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writing
    assert closed.is_set() and ended == []
