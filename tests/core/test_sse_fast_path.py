"""SSE parser: the whole-event fast path reads what the line rules read.

``SSEParser.feed`` takes a chunk of whole, LF-ended events straight to
``_feed_whole_events``. ``LineRulesOnly`` never does, so every byte goes through the
general line rules; fed the same chunks, both must return the same events, keep the
same pending count and last id, and fail the same way.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import RemoteProtocolError
from core.sse import SSEParser


class LineRulesOnly(SSEParser):
    """The parser with its whole-event fast path turned off."""

    def _clean(self) -> bool:
        return False


def _read(parser: SSEParser, chunks: list[bytes]) -> list:
    said = []
    for chunk in chunks:
        try:
            said.append(("events", parser.feed(chunk), parser.pending_bytes, parser.last_event_id))
        except RemoteProtocolError as exc:
            said.append(("error", str(exc), exc.hint))
            return said
    said.append(("eof", parser.feed_eof()))
    return said


_values = st.text(alphabet="ab é:\x00", max_size=12).map(str.encode)
_lines = st.one_of(
    _values.map(lambda value: b"data: " + value),  # the shape the fast path takes
    _values.map(lambda value: b"data:" + value),
    st.just(b"data"),
    _values.map(lambda value: b"event: " + value),
    _values.map(lambda value: b"id: " + value),
    st.sampled_from([b"retry: 3000", b"retry: x", b": keep-alive", b"other: 1", b""]),
    st.binary(max_size=8),  # anything, CR and LF included
)
_blocks = st.lists(_lines, min_size=1, max_size=4).map(lambda lines: b"\n".join(lines) + b"\n\n")


def _chunks(blocks: list[bytes], groups: list[int], cuts: list[int]) -> list[bytes]:
    """The stream's LF-ended lines grouped into chunks (so a chunk ends on a line, and
    often on an event's blank line, as upstreams send them), some chunks cut once
    more anywhere."""
    lines = b"".join(blocks).splitlines(keepends=True)
    chunks, index = [], 0
    for size in groups:
        chunks.append(b"".join(lines[index:index + size]))
        index += size
    chunks.append(b"".join(lines[index:]))
    for cut in cuts:
        at = cut % len(chunks)
        chunk = chunks[at]
        point = cut // len(chunks) % (len(chunk) + 1)
        chunks[at:at + 1] = [chunk[:point], chunk[point:]]
    return [chunk for chunk in chunks if chunk]


@settings(max_examples=500)
@given(blocks=st.lists(_blocks, max_size=10), groups=st.lists(st.integers(1, 6), max_size=12),
       cuts=st.lists(st.integers(min_value=0), max_size=2), cap=st.sampled_from([12, 40, 4096]))
def test_the_fast_path_reads_what_the_line_rules_read(blocks, groups, cuts, cap):
    chunks = _chunks(blocks, groups, cuts)
    assert _read(SSEParser(cap), chunks) == _read(LineRulesOnly(cap), chunks)


def test_a_retry_before_a_whole_event_chunk_belongs_to_that_event():
    # A retry field arriving alone leaves an event pending: the next chunk of whole
    # events must not take the fast path and drop it.
    parser = SSEParser()
    assert parser.feed(b"data: first\n\n") != []
    assert parser.feed(b"retry: 3000\n") == []
    [event] = parser.feed(b"data: second\n\n")
    assert (event.data, event.retry) == ("second", 3000)
