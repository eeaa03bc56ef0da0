"""Fuzzing what an OpenAI-compatible upstream sends once the SSE parser has split it:
chunk data, error bodies, model lists. Each gives a value or ``RemoteProtocolError``."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import RemoteProtocolError
from core.sse import (
    DONE,
    ServerSentEvent,
    StreamTally,
    decode_chat_event,
    model_ids,
    upstream_error_message,
)
from tests.fuzz.strategies import json_values, objects_with
from tests.fuzz.verdicts import read_or_refusal

chunks = objects_with({
    "choices": st.lists(objects_with({"finish_reason": st.one_of(st.none(), st.text(max_size=5)),
                                      "delta": json_values}), max_size=2),
    "usage": st.one_of(st.none(), objects_with({"total_tokens": st.integers()})),
    "error": json_values,
})
data = st.one_of(st.text(max_size=60), json_values.map(json.dumps), chunks.map(json.dumps),
                 st.just("[DONE]"))


def _event(text: str) -> ServerSentEvent:
    return ServerSentEvent(event="message", data=text)


@settings(max_examples=300)
@given(st.lists(data, max_size=6))
def test_any_event_data_is_tallied_or_a_remote_protocol_error(texts):
    tally = StreamTally()
    for text in texts:
        try:
            tally.observe_event(_event(text))
        except RemoteProtocolError:
            continue
        decoded = decode_chat_event(_event(text))
        assert decoded is DONE or isinstance(decoded, dict)
    assert tally.complete in (True, False)


@settings(max_examples=200)
@given(st.one_of(st.binary(max_size=80), json_values.map(lambda v: json.dumps(v).encode())),
       st.integers(400, 599))
def test_any_error_body_gives_a_message(body, status):
    message = upstream_error_message(body, status)
    assert isinstance(message, str) and message


@settings(max_examples=200)
@given(st.dictionaries(st.text(max_size=6), json_values, max_size=3)
       | objects_with({"data": st.lists(objects_with({"id": st.text(max_size=5)}), max_size=3)}))
def test_any_models_answer_gives_ids_or_a_remote_protocol_error(payload):
    ids = read_or_refusal(model_ids, payload, RemoteProtocolError)
    if not isinstance(ids, RemoteProtocolError):
        assert all(isinstance(i, str) for i in ids)
