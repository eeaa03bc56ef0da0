"""The event-stream parser: WHATWG rules, any chunking, any bytes, bounded memory."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import RemoteProtocolError
from core.sse import SSEParser, ServerSentEvent


def feed_whole(data: bytes, **kwargs) -> list[ServerSentEvent]:
    return SSEParser(**kwargs).feed(data)


def feed_bytewise(data: bytes, **kwargs) -> list[ServerSentEvent]:
    parser = SSEParser(**kwargs)
    events = []
    for i in range(len(data)):
        events += parser.feed(data[i : i + 1])
    return events


def feed_in_pieces(data: bytes, cuts: list[int]) -> list[ServerSentEvent]:
    parser = SSEParser()
    events, start = [], 0
    for cut in sorted(set(cuts)) + [len(data)]:
        events += parser.feed(data[start:cut])
        start = cut
    return events


FEEDERS = pytest.mark.parametrize("feed", [feed_whole, feed_bytewise], ids=["whole", "bytewise"])


def datas(events: list[ServerSentEvent]) -> list[str]:
    return [event.data for event in events]


#: Streams and the data of the events they make, whatever the chunking.
STREAMS = [
    pytest.param(b"data: YHOO\ndata: +2\ndata: 10\n\n", ["YHOO\n+2\n10"],
                 id="data_lines_of_one_event_are_joined_by_newlines"),
    # The spec's own example: two events, "" and "\n"; the last "data:" never ends.
    pytest.param(b"data\n\ndata\ndata\n\ndata:", ["", "\n"],
                 id="a_bare_data_field_is_an_empty_line_and_a_pending_event_is_not_dispatched"),
    pytest.param(b"data:test\n\ndata: test\n\ndata:  two\n\n", ["test", "test", " two"],
                 id="only_one_space_after_the_colon_is_dropped"),
    pytest.param(b"data: a\r\ndata: b\rdata: c\n\r\n", ["a\nb\nc"],
                 id="mixed_line_endings_in_one_stream"),
    pytest.param(b": keep-alive\n\n:another\ndata: x\n\n", ["x"],
                 id="comments_are_skipped"),
    pytest.param(b"\xef\xbb\xbfdata: x\n\n", ["x"],
                 id="a_bom_at_the_start_is_dropped"),
    pytest.param(b"data: \xff\xfe ok\n\n", ["\ufffd\ufffd ok"],
                 id="invalid_utf8_becomes_replacement_characters"),
    pytest.param("data: héllo 😀\n\n".encode(), ["héllo 😀"],
                 id="multibyte_characters_survive_any_split"),
]


@FEEDERS
@pytest.mark.parametrize(("stream", "expected"), STREAMS)
def test_a_stream_gives_the_data_of_its_events(feed, stream, expected):
    assert datas(feed(stream)) == expected


@FEEDERS
@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"], ids=["lf", "cr", "crlf"])
def test_every_line_ending_is_accepted(feed, eol):
    stream = b"data: a" + eol + b"data: b" + eol + eol + b"data: c" + eol + eol
    assert datas(feed(stream)) == ["a\nb", "c"]


def test_a_crlf_split_between_two_chunks_is_one_line_end():
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert datas(parser.feed(b"\ndata: b\r\n\r\n")) == ["a\nb"]


def test_a_cr_then_a_blank_line_in_the_next_chunk_dispatches():
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"") == []  # an empty read does not lose the pending CR
    assert datas(parser.feed(b"\n\n")) == ["a"]


@FEEDERS
def test_event_type_id_and_retry_fields(feed):
    events = feed(b"event: add\nid: 42\nretry: 1500\ndata: one\n\ndata: two\n\n")
    assert events == [
        ServerSentEvent("add", "one", "42", 1500),
        ServerSentEvent("message", "two", "42", None),  # id persists, type and retry do not
    ]


@FEEDERS
def test_an_id_with_nul_and_a_retry_that_is_not_digits_are_ignored(feed):
    events = feed(b"id: 1\n\nid: a\x00b\nretry: 10ms\nfoo: bar\ndata: x\n\n")
    assert events == [ServerSentEvent("message", "x", "1", None)]


@FEEDERS
def test_an_event_without_data_is_not_dispatched_and_resets_its_type(feed):
    assert feed(b"event: ping\n\ndata: x\n\n") == [ServerSentEvent("message", "x")]


def test_a_bom_later_in_the_stream_is_not_dropped():
    # Only the first bytes of the stream may be a BOM; later it makes an unknown field.
    assert datas(feed_whole(b"data: x\n\n\xef\xbb\xbfdata: y\n\ndata: z\n\n")) == ["x", "z"]


def test_a_stream_shorter_than_a_bom_is_kept_until_it_is_not_one():
    parser = SSEParser()
    assert parser.feed(b"\xef") == []
    assert parser.feed(b"\xbb") == []
    assert datas(parser.feed(b"\xbfdata: x\n\n")) == ["x"]


def test_trailing_bytes_wait_for_the_next_chunk():
    parser = SSEParser()
    assert datas(parser.feed(b"data: one\n\ndata: tw")) == ["one"]
    assert datas(parser.feed(b"o\n\n")) == ["two"]


def test_pending_bytes_count_the_unfinished_event():
    parser = SSEParser()
    assert parser.pending_bytes == 0
    parser.feed(b"data: one\n\n: comment\n")
    assert parser.pending_bytes == 0
    parser.feed(b"data: tw")
    assert parser.pending_bytes == 8
    parser.feed(b"o\n\nevent: x\nda")
    assert parser.pending_bytes == len(b"event: x\nda")
    parser.feed(b"ta: 3\n\n")
    assert parser.pending_bytes == 0


def test_feed_eof_reports_a_discarded_event():
    parser = SSEParser()
    parser.feed(b"data: half")
    assert parser.feed_eof() is True
    assert SSEParser().feed_eof() is False


def test_a_line_without_end_past_the_cap_raises_and_the_parser_stays_broken():
    parser = SSEParser(max_event_bytes=1000)
    parser.feed(b"data: " + b"x" * 900)
    with pytest.raises(RemoteProtocolError):
        parser.feed(b"x" * 200)
    with pytest.raises(RemoteProtocolError):
        parser.feed(b"\n\n")
    with pytest.raises(RemoteProtocolError):
        parser.feed_eof()


def test_many_data_lines_without_a_blank_line_past_the_cap_raise():
    parser = SSEParser(max_event_bytes=1000)
    with pytest.raises(RemoteProtocolError):
        for _ in range(200):
            parser.feed(b"data: 0123456789\n")


@FEEDERS
def test_a_whole_event_past_the_cap_raises(feed):
    with pytest.raises(RemoteProtocolError):
        feed(b"data: ok\n\ndata: " + b"x" * 2000 + b"\n\n", max_event_bytes=1000)


def test_the_cap_is_per_event_not_per_stream():
    parser = SSEParser(max_event_bytes=100)
    events = parser.feed(b"data: 0123456789\n\n" * 1000)
    assert len(events) == 1000


def test_the_start_of_the_next_event_does_not_count_against_the_last_ones_size():
    # 31 bytes of data, then 18 of the next event's line: together over the cap of 40,
    # each under it, however the chunk is cut.
    stream = b": ping\r\ndata: " + b"x" * 31 + b"\n\ndata: " + b"y" * 12 + b"\n\n"
    for cut in range(len(stream) + 1):
        parser = SSEParser(max_event_bytes=40)
        events = parser.feed(stream[:cut]) + parser.feed(stream[cut:])
        assert [event.data for event in events] == ["x" * 31, "y" * 12], cut


# -- properties ------------------------------------------------------------------

_line_ends = st.sampled_from([b"\n", b"\r", b"\r\n"])
_values = st.binary(max_size=20).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))
_lines = st.tuples(
    st.sampled_from([b"data", b"data:", b"data: ", b"event: ", b"id: ", b"retry: ", b": ", b""]),
    _values,
    _line_ends,
).map(lambda parts: b"".join(parts))
_streams = st.lists(_lines, max_size=30).map(lambda lines: b"".join(lines))


@settings(max_examples=300)
@given(_streams, st.lists(st.integers(min_value=0, max_value=400), max_size=20))
def test_any_split_of_a_stream_gives_the_same_events_as_feeding_it_whole(stream, cuts):
    cuts = [cut for cut in cuts if cut <= len(stream)]
    assert feed_in_pieces(stream, cuts) == feed_whole(stream)


@settings(max_examples=300)
@given(
    st.lists(st.one_of(_lines, st.binary(max_size=8)), max_size=20).map(b"".join),
    st.lists(st.integers(min_value=0, max_value=300), max_size=12),
)
def test_the_bytes_before_the_pending_ones_hold_exactly_the_dispatched_events(stream, cuts):
    # Whatever the chunking, the input minus its pending tail parses, on its own,
    # to the events dispatched so far: a relay cutting there sends whole events.
    parser, fed, events, start = SSEParser(), b"", [], 0
    for cut in sorted({min(cut, len(stream)) for cut in cuts}) + [len(stream)]:
        chunk, start = stream[start:cut], cut
        events += parser.feed(chunk)
        fed += chunk
        head = fed[: len(fed) - parser.pending_bytes]
        alone = SSEParser()
        assert [e.data for e in alone.feed(head)] == [e.data for e in events]
        assert alone.pending_bytes == 0 and alone.feed_eof() is False


@settings(max_examples=150)
@given(_streams)
def test_byte_by_byte_gives_the_same_events_as_whole(stream):
    assert feed_bytewise(stream) == feed_whole(stream)


@settings(max_examples=500)
@given(st.lists(st.binary(max_size=64), max_size=20), st.integers(min_value=1, max_value=200))
def test_any_bytes_give_events_or_remote_protocol_error_nothing_else(chunks, cap):
    parser = SSEParser(max_event_bytes=cap)
    try:
        for chunk in chunks:
            for event in parser.feed(chunk):
                assert isinstance(event, ServerSentEvent)
                assert isinstance(event.data, str)
        parser.feed_eof()
    except RemoteProtocolError:
        pass


@settings(max_examples=200)
@given(st.lists(st.binary(max_size=64), max_size=30))
def test_memory_held_never_exceeds_the_cap(chunks):
    cap = 128
    parser = SSEParser(max_event_bytes=cap)
    try:
        for chunk in chunks:
            parser.feed(chunk)
            held = len(parser._buffer) + sum(len(line) + 1 for line in parser._data)
            assert held <= cap
    except RemoteProtocolError:
        pass


def test_a_cr_inside_a_chunk_that_ends_mid_line_does_not_swallow_the_next_lf():
    # Found by the split property: "event: a\r" then an unfinished "data: b" in one
    # chunk made the parser take the next chunk's leading LF for the tail of a CRLF,
    # so the line "data: b" and the blank line after it ran together.
    stream = b"event: a\rdata: b\n\n"
    cut = len(b"event: a\rdata: b")
    assert feed_in_pieces(stream, [cut]) == feed_whole(stream) == [
        ServerSentEvent("a", "b", None, None)]


_FIELD_TEXT = st.text(st.characters(blacklist_characters="\r\n\x00", blacklist_categories=("Cs",)))


@given(event=st.sampled_from(["message", "chunk"]),
       data=st.lists(_FIELD_TEXT, min_size=1, max_size=4).map("\n".join),
       id=st.none() | _FIELD_TEXT, retry=st.none() | st.integers(0, 10**6))
def test_an_encoded_event_parses_back_as_itself(event, data, id, retry):
    original = ServerSentEvent(event, data, id, retry)
    assert SSEParser().feed(original.encode()) == [original]
