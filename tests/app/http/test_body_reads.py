"""Reading a request's raw body under its cap (``app.http.bodies.read_bytes``): a body
of declared length is read whole at once, one without a length chunk by chunk, and
either way nothing past the cap is accepted."""

from __future__ import annotations

import pytest
from blacksheep import Request
from blacksheep.contents import ASGIContent

from app.errors import PayloadTooLarge
from app.http.bodies import read_bytes

pytestmark = pytest.mark.anyio


def _request(headers: list[tuple[bytes, bytes]], parts: list[bytes]) -> Request:
    messages = [{"type": "http.request", "body": part, "more_body": i < len(parts) - 1}
                for i, part in enumerate(parts)]

    async def receive() -> dict:
        return messages.pop(0)

    request = Request("POST", b"/v1/chat/completions", headers)
    request.content = ASGIContent(receive)
    return request


async def test_a_body_of_declared_length_arrives_whole_though_sent_in_parts():
    request = _request([(b"content-length", b"6")], [b"ab", b"cd", b"ef"])
    assert await read_bytes(request, 10) == b"abcdef"


async def test_a_declared_length_over_the_cap_is_refused_before_reading():
    request = _request([(b"content-length", b"11")], [])  # receive() would fail
    with pytest.raises(PayloadTooLarge):
        await read_bytes(request, 10)


async def test_more_bytes_than_the_cap_are_refused_though_the_declared_length_fits():
    request = _request([(b"content-length", b"4")], [b"abcdef", b"ghijkl"])
    with pytest.raises(PayloadTooLarge):
        await read_bytes(request, 10)


@pytest.mark.parametrize("headers", [[], [(b"transfer-encoding", b"chunked"),
                                          (b"content-length", b"4")]])
async def test_a_body_without_a_usable_length_is_read_chunk_by_chunk_under_the_cap(headers):
    assert await read_bytes(_request(headers, [b"ab", b"", b"cd"]), 10) == b"abcd"
    with pytest.raises(PayloadTooLarge):
        await read_bytes(_request(headers, [b"abcdef", b"ghijkl"]), 10)
