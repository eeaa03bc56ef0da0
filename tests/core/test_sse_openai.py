"""Reading upstream payloads: chunk decoding, error messages, models list, the tally."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import RemoteProtocolError
from core.sse import (
    DONE,
    ServerSentEvent,
    StreamTally,
    asking_usage,
    decode_chat_event,
    decode_json_object,
    is_usage_chunk,
    model_ids,
    upstream_error_message,
    usage_asked,
)


def event(data: str) -> ServerSentEvent:
    return ServerSentEvent("message", data)


def chunk(content=None, finish_reason=None, usage="absent", choices=True) -> dict:
    value: dict = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    delta = {} if content is None else {"content": content}
    value["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish_reason}] if choices else []
    if usage != "absent":
        value["usage"] = usage
    return value


def test_done_sentinel_is_recognised():
    assert decode_chat_event(event("[DONE]")) is DONE


def test_a_chunk_decodes_to_a_dict():
    assert decode_chat_event(event('{"id":"c","choices":[]}')) == {"id": "c", "choices": []}


@pytest.mark.parametrize("data", ["{not json", "", "[1, 2]", '"text"', "[DONE] ", "nan"])
def test_anything_else_is_a_remote_protocol_error(data):
    with pytest.raises(RemoteProtocolError):
        decode_chat_event(event(data))


def test_deeply_nested_json_is_a_remote_protocol_error():
    with pytest.raises(RemoteProtocolError):
        decode_json_object("[" * 100000)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"error": {"message": "model not found", "type": "invalid_request_error"}}', "model not found"),
        (b'{"error": "model \\"x\\" not found"}', 'model "x" not found'),
        (b'{"detail": "Not Found"}', "Not Found"),
        (b'{"message": "overloaded"}', "overloaded"),
        (b"<html>Bad Gateway</html>", "<html>Bad Gateway</html>"),
        (b"", "upstream answered HTTP 503"),
        (b"\xff\xfe", "\ufffd\ufffd"),
    ],
)
def test_upstream_error_message_reads_every_usual_shape(body, message):
    assert upstream_error_message(body, 503) == message


def test_model_ids():
    assert model_ids({"object": "list", "data": [{"id": "a"}, {"id": "b"}]}) == ["a", "b"]
    for bad in ({}, {"data": "x"}, {"data": [{"name": "a"}]}, {"data": [1]}):
        with pytest.raises(RemoteProtocolError):
            model_ids(bad)


def test_tally_collects_finish_reason_usage_and_done():
    tally = StreamTally()
    usage = {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3}
    for value in (chunk("a"), chunk(finish_reason="stop"), chunk(usage=usage, choices=False), DONE):
        tally.observe(value)
    assert (tally.finish_reason, tally.usage, tally.done, tally.chunks) == ("stop", usage, True, 3)
    assert tally.complete


def test_tally_of_a_cut_stream_is_not_complete():
    tally = StreamTally()
    tally.observe(chunk("a"))
    assert not tally.complete


def test_tally_records_an_in_stream_error():
    tally = StreamTally()
    tally.observe_event(event('{"error": {"message": "overloaded", "code": 503}}'))
    assert tally.error == {"message": "overloaded", "code": 503}


def test_raw_tally_decodes_only_the_events_it_needs():
    tally = StreamTally()
    # An ordinary content chunk is relayed without a decode, even when it is broken...
    tally.observe_event(event('{"choices":[{"delta":{"content":"x"},"finish_reason":null}'))
    # ...but one that may carry the finish reason or usage must decode.
    with pytest.raises(RemoteProtocolError):
        tally.observe_event(event('{"choices":[{"finish_reason":"stop"'))


_markers = st.sampled_from(['"finish_reason":null', '"usage":null', '"error"'])
_chunks = st.builds(
    chunk,
    # Text that spells the markers must not fool the raw tally's shortcut.
    content=st.one_of(st.none(), st.text(), _markers),
    finish_reason=st.sampled_from([None, "stop", "length", "tool_calls"]),
    usage=st.sampled_from(["absent", None, {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}]),
    choices=st.booleans(),
)
_separators = st.sampled_from([(",", ":"), (", ", ": "), (",", " : ")])


@settings(max_examples=300)
@given(st.lists(_chunks, max_size=8), _separators)
def test_raw_tally_agrees_with_decoding_every_chunk(chunks, separators):
    decoded, raw = StreamTally(), StreamTally()
    for value in chunks:
        decoded.observe(value)
        raw.observe_event(event(json.dumps(value, separators=separators)))
    assert (raw.finish_reason, raw.usage, raw.error, raw.chunks) == (
        decoded.finish_reason,
        decoded.usage,
        decoded.error,
        decoded.chunks,
    )


# -- usage asked on the client's behalf ------------------------------------------------


def test_usage_is_asked_for_only_when_the_request_did_not():
    body = {"model": "m", "stream_options": {"other": 1}}
    assert not usage_asked(body)
    assert asking_usage(body) == {"model": "m", "stream_options": {"other": 1,
                                                                    "include_usage": True}}
    assert body == {"model": "m", "stream_options": {"other": 1}}  # left as it was
    assert asking_usage({"model": "m"})["stream_options"] == {"include_usage": True}
    asked = {"stream_options": {"include_usage": True}}
    assert usage_asked(asked) and asking_usage(asked) is None
    assert asking_usage({"stream_options": "odd"}) is None  # forwarded as it is
    assert asking_usage({"stream_options": {"include_usage": "yes"}}) is None
    for no in (False, None):
        assert usage_asked(asking_usage({"stream_options": {"include_usage": no}}))


@pytest.mark.parametrize("data, usage_chunk", [
    ('{"choices":[],"usage":{"total_tokens":3}}', True),
    ('{"id": "x", "choices": [], "usage": {"total_tokens": 3}}', True),
    ('{"choices":[ ],"usage":{"total_tokens":3}}', True),
    ('{"id":"x","usage":{"total_tokens":3}}', True),
    ('{"choices":[],"usage":null}', False),
    ('{"choices":[{"delta":{"content":"\\"choices\\":[]"}}],"usage":null}', False),
    ('{"choices":[{"delta":{}}],"usage":{"total_tokens":3}}', False),
    ('[DONE]', False),
    ('{"choices":[] broken', False),
])
def test_the_usage_chunk_is_told_from_every_other(data, usage_chunk):
    assert is_usage_chunk(ServerSentEvent("message", data)) is usage_chunk
