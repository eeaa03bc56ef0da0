"""RawRelay over scripted reads: plain content reads are counted, not parsed."""

from __future__ import annotations

import json

import pytest

from adapters.providers.streams import RawRelay
from core.sse import SSEParser

pytestmark = pytest.mark.anyio


class ScriptedBody:
    """What ``RawRelay`` reads of a response: ``content.readany()``, one read a call."""

    def __init__(self, reads: list[bytes]) -> None:
        self.content = self
        self._reads = list(reads)

    async def readany(self) -> bytes:
        return self._reads.pop(0) if self._reads else b""


def frame(piece: str | None, finish: str | None = None) -> bytes:
    delta = {} if piece is None else {"content": piece}
    chunk = {"choices": [{"delta": delta, "finish_reason": finish}], "usage": None}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


async def test_plain_reads_pass_without_the_parser_and_still_count(monkeypatch):
    fed: list[bytes] = []
    feed = SSEParser.feed
    monkeypatch.setattr(SSEParser, "feed",
                        lambda parser, data: fed.append(data) or feed(parser, data))
    last = frame(None, "stop") + b"data: [DONE]\n\n"
    reads = [frame("Hel"), frame("lo") + frame(" there"), last]
    relay = RawRelay(ScriptedBody(reads), "scripted", 4096)  # type: ignore[arg-type]
    relayed = [data async for data in relay]
    assert relayed == reads
    assert fed == [last]  # only the read that accounting needs was parsed
    assert (relay.tally.chunks, relay.finish_reason, relay.tally.done) == (4, "stop", True)
