"""Relayed streams: counting a read's plain content chunks is the full tally's work.

``StreamTally.observe_plain_prefix`` takes the whole, ordinary content chunks a read
begins with at once: the parser moves past them unbuilt and only the chunk count
grows; the rest of the read is fed as usual. ``relay`` below is ``RawRelay``'s loop
without the I/O; offered every read first or never, it must relay the same bytes, end
with the same tally and parser, and fail the same way.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import RemoteProtocolError
from core.sse import SSEParser, StreamTally
from tests.core.test_sse_fast_path import _blocks, _chunks


def relay(chunks: list[bytes], cap: int, *, plain_first: bool) -> tuple:
    parser, tally = SSEParser(cap), StreamTally()
    relayed, held, failure = [], b"", None
    try:
        for data in chunks:
            taken = tally.observe_plain_prefix(parser, data) if plain_first else 0
            plain, data = data[:taken], data[taken:]
            if taken and not data:
                relayed.append(plain)
                continue
            for event in parser.feed(data):
                tally.observe_event(event)
            data = held + data
            pending = parser.pending_bytes
            data, held = (data, b"") if pending == 0 else (data[:-pending], data[-pending:])
            relayed.append(plain + data)
        parser.feed_eof()
    except RemoteProtocolError as exc:
        failure = (str(exc), exc.hint)
    # After a failure the read is not relayed at all, and the chunks counted before it
    # are of no use: the count is compared only for streams that end well.
    return (b"".join(relayed), held, failure, parser.pending_bytes, parser.last_event_id,
            tally.done, tally.error, tally.finish_reason, tally.usage,
            tally.chunks if failure is None else None)


def _content(text: str, finish: str | None = None, spaced: bool = False, **extra) -> bytes:
    chunk = {"choices": [{"delta": {"content": text}, "finish_reason": finish}], **extra}
    return json.dumps(chunk, separators=(", ", ": ") if spaced else (",", ":")).encode()


_texts = st.text(alphabet='ab "\\é\n:[]', max_size=10)
_payloads = st.one_of(
    # the usual chunk, in both spacings, with or without a null usage
    st.builds(_content, _texts, spaced=st.booleans()),
    st.builds(lambda text, spaced: _content(text, spaced=spaced, usage=None),
              _texts, st.booleans()),
    # the ones accounting needs
    st.builds(_content, _texts, st.sampled_from(["stop", "length"]), st.booleans()),
    st.just(_content("", usage={"prompt_tokens": 3, "completion_tokens": 5})),
    st.just(b'{"choices":[],"usage":{"total_tokens":8}}'),
    st.just(b'{"choices":[{"finish_reason":null},{"finish_reason":null}],"usage":{"n":1}}'),
    st.just(b'{"error": {"message": "overloaded", "code": 503}}'),
    st.just(b'{"choices":[{"finish_reason":null}],"error":"late"}'),
    st.just(b"[DONE]"),
    # a null finish reason alone is not a chunk: the full path decodes and rejects it
    st.just(b'"finish_reason":null'),
    st.just(b'{"finish_reason": null, "usage" :{"x":1}}'),
    st.just(b"{}"),
    st.just(b"not json"),
    st.binary(max_size=6).map(lambda junk: b'{"finish_reason":null,"x":"' + junk + b'"}'),
    # a CR ends a line too: here the id it starts is the parser's to note
    st.just(b'{"finish_reason":null}\rid: 9'),
)
# What begins an event's first line: nearly always data, but a comment or another
# field holding a chunk's text must not count as one.
_line_starts = st.sampled_from([b"data: "] * 6 + [b"data:", b": ", b"id: ", b"event: "])
_extra_lines = st.sampled_from([b": keep-alive", b"id: 7", b"event: message", b"retry: 10",
                                b"data", b"data:" + _content("x")])


@st.composite
def _events(draw) -> bytes:
    lines = [draw(_line_starts) + draw(_payloads)]
    if draw(st.integers(0, 4)) == 0:  # now and then, another line in the event
        lines.insert(draw(st.integers(0, 1)), draw(_extra_lines))
    event = b"\n".join(lines) + b"\n\n"
    if draw(st.integers(0, 5)) == 0:
        event = event.replace(b"\n", b"\r\n")
    if draw(st.integers(0, 8)) == 0:
        event = b": comment\n\n" + event
    return event


@settings(max_examples=800)
@given(blocks=st.lists(st.tuples(_events(), st.sampled_from([0, 1, 1, 2])), max_size=12),
       cuts=st.lists(st.integers(min_value=0), max_size=3), bom=st.booleans(),
       cap=st.sampled_from([40, 90, 4096]))
def test_plain_reads_first_relays_and_tallies_what_the_parser_alone_does(blocks, cuts, bom, cap):
    chunks = _chunks(blocks, cuts)
    if bom and chunks:
        chunks[0] = b"\xef\xbb\xbf" + chunks[0]
    assert relay(chunks, cap, plain_first=True) == relay(chunks, cap, plain_first=False)


# Short runs of lines, so that a stray line among data lines is often drawn.
_line_runs = st.lists(st.sampled_from([b"data: a", b"data: bb", b"data:c", b"id: 5", b": d", b"",
                                       b"event: e", b"data: \r"]), max_size=6).map(
    lambda lines: b"\n".join(lines) + b"\n\n")


@settings(max_examples=500)
@given(before=st.one_of(st.just(b""), _line_runs, _line_runs.map(lambda run: run[:-1] + b"\r"),
                        st.binary(max_size=6)),
       blocks=st.lists(st.one_of(_blocks, _line_runs), min_size=1, max_size=4),
       cap=st.sampled_from([12, 40, 4096]))
def test_skipping_data_events_is_feeding_them_without_building_them(before, blocks, cap):
    data = b"".join(blocks)
    skipping, feeding = SSEParser(cap), SSEParser(cap)
    try:
        skipping.feed(before)
        feeding.feed(before)
    except RemoteProtocolError:
        return  # already broken: nothing is skipped then, the next feed raises
    skipped = skipping.skip_data_events(data)
    if skipped is None:
        return
    events = feeding.feed(data)
    assert [event.event for event in events] == ["message"] * skipped
    assert vars(skipping) == vars(feeding)  # every field of the parser's state alike


def test_a_read_of_content_chunks_only_counts_them():
    parser, tally = SSEParser(), StreamTally()
    read = b"data: " + _content("Hel") + b"\n\ndata: " + _content("lo", spaced=True) + b"\n\n"
    assert tally.observe_plain_prefix(parser, read) == len(read)
    assert (tally.chunks, tally.finish_reason, tally.usage) == (2, None, None)
    assert not tally.complete
    assert parser.pending_bytes == 0


def test_the_content_chunks_before_a_streams_end_are_counted_and_the_end_left_to_the_parser():
    plain = b"".join(b"data: " + _content(text) + b"\n\n" for text in ("Hel", "lo", "!"))
    end = (b"data: " + _content("", "stop") + b"\n\n"
           + b"data: " + _content("", usage={"total_tokens": 9}) + b"\n\ndata: [DONE]\n\n")
    parser, tally = SSEParser(), StreamTally()
    assert tally.observe_plain_prefix(parser, plain + end) == len(plain)
    assert tally.chunks == 3
    for event in parser.feed(end):
        tally.observe_event(event)
    assert (tally.chunks, tally.finish_reason, tally.usage, tally.done) == (
        5, "stop", {"total_tokens": 9}, True)


def test_a_read_of_one_endless_line_of_markers_is_looked_through_once():
    # An upstream's read with the marker many times on one line and no event end: a
    # line tried from each of its markers would cost the read's length squared.
    parser, tally = SSEParser(), StreamTally()
    read = b'data: {"finish_reason":null' * 80_000
    assert tally.observe_plain_prefix(parser, read) == 0
    assert tally.chunks == 0


def test_a_read_that_accounting_needs_is_left_to_the_parser():
    finishing = b"data: " + _content("", "stop") + b"\n\n"
    plain = b"data: " + _content("x") + b"\n\n"
    for read in (finishing, plain + b"data: [DONE]\n\n", plain[:-1], plain.replace(b"\n", b"\r\n"),
                 b"data: " + _content("", usage={"total_tokens": 1}) + b"\n\n",
                 b'data: {"error": {"message": "x"}}\n\n', b": ping\n\n" + plain,
                 b"id: 1\n" + plain, plain + b"\n\n" + plain):
        parser, tally = SSEParser(), StreamTally()
        taken = tally.observe_plain_prefix(parser, read)
        assert taken < len(read), read
        # What was taken is the plain chunks before the first that accounting needs.
        assert taken in (0, len(plain)), read
        assert tally.chunks == (taken > 0), read


def test_a_read_after_a_partial_event_is_left_to_the_parser():
    parser, tally = SSEParser(), StreamTally()
    plain = b"data: " + _content("x") + b"\n\n"
    parser.feed(plain[:10])
    assert tally.observe_plain_prefix(parser, plain) == 0
    capped = SSEParser(len(plain) - 8)  # just under what the event needs
    assert tally.observe_plain_prefix(capped, plain) == 0


def test_a_chunk_with_any_other_line_is_not_skipped():
    for chunk in (b"data: a\nid: 5\n\n", b"data: a\n\nid: 5\n\n", b"data: a\n\n\n\ndata: b\n\n",
                  b"data: a\ndata: b\n\n", b"data: a\n\n: c\n\n", b"data: a\r\n\r\n"):
        assert SSEParser().skip_data_events(chunk) is None, chunk
    assert SSEParser().skip_data_events(b"data: a\n\ndata: b\n\n") == 2


def test_a_read_after_a_held_line_end_is_relayed_behind_it():
    # A CRLF cut after its CR: the LF comes alone, between events but held back by the
    # relay, and must go out before the next read.
    plain = b"data: " + _content("x") + b"\n\n"
    chunks = [b"data: " + _content("a") + b"\r\n\r", b"\n", plain]
    relayed = relay(chunks, 4096, plain_first=True)
    assert relayed == relay(chunks, 4096, plain_first=False)
    assert relayed[0].endswith(b"\r\n\r\n" + plain)
