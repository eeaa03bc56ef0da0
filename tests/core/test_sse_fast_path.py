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
_data_lines = st.one_of(
    _values.map(lambda value: b"data: " + value),  # the shape the fast path takes
    _values.map(lambda value: b"data:" + value),
    st.just(b"data"),
)
_field_lines = st.one_of(
    _values.map(lambda value: b"event: " + value),
    _values.map(lambda value: b"id: " + value),
    st.sampled_from([b"retry: 3000", b"retry:10", b"retry: x"]),
    st.sampled_from([b": keep-alive", b"other: 1", b""]),
    st.binary(max_size=8),  # anything, CR and LF included
)
_usual_fields = st.one_of(
    _values.map(lambda value: b"event: " + value),
    _values.map(lambda value: b"id: " + value),
    st.sampled_from([b"retry: 3000", b"retry: x", b": keep-alive"]),
)
_blocks = st.one_of(
    # An event as servers write one: a few fields, then its ``data: `` lines.
    st.tuples(st.lists(_usual_fields, max_size=2),
              st.lists(_values.map(lambda value: b"data: " + value), min_size=1, max_size=2))
    .map(lambda fields_data: b"\n".join(fields_data[0] + fields_data[1]) + b"\n\n"),
    # Lines of any kind in any order.
    st.lists(st.one_of(_data_lines, _field_lines), min_size=1, max_size=4)
    .map(lambda lines: b"\n".join(lines) + b"\n\n"),
)


def _chunks(blocks: list[tuple[bytes, int]], cuts: list[int]) -> list[bytes]:
    """Events grouped into chunks as upstreams send them: after each block the chunk
    goes on (0), ends (1), or had already ended after the block's first line (2: a
    field arrives alone, the rest of its event with the next chunk). Some chunks are
    then cut once more anywhere."""
    chunks, current = [], b""
    for block, end in blocks:
        if end == 2 and b"\n" in block[:-2]:
            first, rest = block.split(b"\n", 1)
            chunks.append(current + first + b"\n")
            current, block = b"", rest
        current += block
        if end:
            chunks.append(current)
            current = b""
    chunks.append(current)
    for cut in cuts:
        at = cut % len(chunks)
        chunk = chunks[at]
        point = cut // len(chunks) % (len(chunk) + 1)
        chunks[at:at + 1] = [chunk[:point], chunk[point:]]
    return [chunk for chunk in chunks if chunk]


@settings(max_examples=500)
@given(blocks=st.lists(st.tuples(_blocks, st.sampled_from([0, 1, 2])), max_size=10),
       cuts=st.lists(st.integers(min_value=0), max_size=2), cap=st.sampled_from([12, 40, 4096]))
def test_the_fast_path_reads_what_the_line_rules_read(blocks, cuts, cap):
    chunks = _chunks(blocks, cuts)
    assert _read(SSEParser(cap), chunks) == _read(LineRulesOnly(cap), chunks)


def test_a_retry_before_a_whole_event_chunk_belongs_to_that_event():
    # A retry field arriving alone leaves an event pending: the next chunk of whole
    # events must not take the fast path and drop it.
    parser = SSEParser()
    assert parser.feed(b"data: first\n\n") != []
    assert parser.feed(b"retry: 3000\n") == []
    [event] = parser.feed(b"data: second\n\n")
    assert (event.data, event.retry) == ("second", 3000)


class Counting(SSEParser):
    """Counts the chunks the fast path took."""

    fast = 0

    def _feed_whole_events(self, data: bytes) -> list:
        self.fast += 1
        return super()._feed_whole_events(data)


def test_a_streams_first_chunk_takes_the_fast_path_unless_a_bom_may_begin_it():
    # A short stream often arrives whole in the first read.
    whole = b'data: {"a": 1}\n\ndata: [DONE]\n\n'
    parser = Counting()
    assert [event.data for event in parser.feed(whole)] == ['{"a": 1}', "[DONE]"]
    assert parser.fast == 1
    with_bom = Counting()
    assert [event.data for event in with_bom.feed(b"\xef\xbb\xbf" + whole)] == [
        '{"a": 1}', "[DONE]"]
    assert with_bom.fast == 0  # the BOM is stripped by the line rules
