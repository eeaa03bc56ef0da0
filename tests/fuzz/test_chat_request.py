"""Fuzzing the chat-completions request reader: any decoded JSON body is a request or
a ``ChatRequestError`` naming the parameter, and reading an accepted request's
question gives text or that same error, never another exception."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.chat_request import ChatRequestError, question_of, read_chat_request, text_of
from tests.fuzz.strategies import json_values, objects_with
from tests.fuzz.verdicts import read_or_refusal

ROLES = st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "x"])
parts = objects_with({"type": st.sampled_from(["text", "input_text", "image_url"]),
                      "text": st.text(max_size=20)})
messages = st.lists(
    objects_with({"role": ROLES, "content": st.one_of(st.text(max_size=20),
                                                      st.lists(parts, max_size=3))}),
    max_size=4,
)
bodies = st.one_of(
    json_values,
    objects_with({
        "model": st.text(max_size=10),
        "messages": messages,
        "n": st.integers(-2, 3),
        "stream": st.booleans(),
        "stream_options": objects_with({"include_usage": st.booleans()}),
        "tools": st.just([]),
        "tool_choice": st.just("none"),
    }),
)


@settings(max_examples=300)
@given(bodies)
def test_any_body_is_a_request_or_a_chat_request_error(body):
    request = read_or_refusal(read_chat_request, body, ChatRequestError)
    if isinstance(request, ChatRequestError):
        assert request.param is None or isinstance(request.param, str)
        return
    assert isinstance(request.model, str) and request.model
    try:
        assert isinstance(question_of(request.messages), str)
    except ChatRequestError as error:
        assert error.param == "messages"


def test_a_text_part_whose_text_is_not_a_string_is_not_text():
    # Found by the fuzzer: a part {"type": "text", "text": 5} passed the reader and
    # then broke joining the question.
    request = read_chat_request({"model": "m", "messages": [
        {"role": "user", "content": [{"type": "text", "text": 5},
                                     {"type": "text", "text": "hello"}]}]})
    assert question_of(request.messages) == "hello"
    assert text_of([{"type": "text", "text": None}]) == ""
