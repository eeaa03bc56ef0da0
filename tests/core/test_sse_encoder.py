"""Our /v1 stream frames: framing, order rules, and parity with the non-streamed answer."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import LocalProtocolError
from core.sse import (
    DONE,
    ChunkEncoder,
    EncoderState,
    SSEParser,
    assemble_completion,
    decode_chat_event,
)

USAGE = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}


def encoder(include_usage: bool = False) -> ChunkEncoder:
    return ChunkEncoder(id="chatcmpl-1", created=1700000000, model="llama3", include_usage=include_usage)


def decode_frames(stream: bytes) -> list:
    """What a client sees: our bytes through an SSE parser and the chunk decoder."""
    parser = SSEParser()
    events = parser.feed(stream)
    assert parser.feed_eof() is False, "every frame must end with a blank line"
    return [decode_chat_event(event) for event in events]


def full_answer(enc: ChunkEncoder, pieces: list[str]) -> bytes:
    frames = [enc.content(piece) for piece in pieces]
    frames += [enc.finish("stop"), enc.usage(USAGE), enc.done()]
    return b"".join(frames)


def test_first_chunk_carries_the_role_and_later_ones_do_not():
    chunks = decode_frames(full_answer(encoder(), ["Hel", "lo"]))
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "refusal": None, "content": "Hel"}
    assert chunks[1]["choices"][0]["delta"] == {"content": "lo"}


def test_every_chunk_has_the_same_id_created_model_and_object():
    chunks = decode_frames(full_answer(encoder(include_usage=True), ["a", "b", "c"]))[:-1]
    assert {(c["id"], c["created"], c["model"], c["object"]) for c in chunks} == {
        ("chatcmpl-1", 1700000000, "llama3", "chat.completion.chunk")
    }


def test_finish_reason_is_only_on_the_last_content_chunk():
    chunks = decode_frames(full_answer(encoder(), ["a", "b"]))
    reasons = [c["choices"][0]["finish_reason"] for c in chunks if c is not DONE]
    assert reasons == [None, None, "stop"]


def test_the_stream_ends_with_done():
    stream = full_answer(encoder(), ["a"])
    assert stream.endswith(b"data: [DONE]\n\n")
    assert decode_frames(stream)[-1] is DONE


def test_usage_chunk_only_when_the_caller_asked_for_it():
    without = decode_frames(full_answer(encoder(include_usage=False), ["a"]))
    assert all("usage" not in c for c in without if c is not DONE)
    with_usage = decode_frames(full_answer(encoder(include_usage=True), ["a"]))
    assert with_usage[-2] == {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "llama3",
        "choices": [],
        "usage": USAGE,
    }
    # With include_usage the other chunks carry usage null, as OpenAI's do.
    assert all(c["usage"] is None for c in with_usage[:-2])


def test_finish_without_content_still_carries_the_role_and_extra_fields():
    enc = encoder()
    chunk = decode_frames(enc.finish("stop", content="all", extra={"annotations": []}))[0]
    assert chunk["choices"][0]["delta"] == {"role": "assistant", "refusal": None, "content": "all", "annotations": []}


def test_error_frame_then_done():
    enc = encoder()
    stream = enc.content("par") + enc.error("upstream timed out", code="upstream_timeout") + enc.done()
    frames = decode_frames(stream)
    error = {"message": "upstream timed out", "type": "server_error", "param": None, "code": "upstream_timeout"}
    assert frames[1] == {"error": error}
    assert frames[2] is DONE


def test_keep_alive_is_a_comment_that_clients_skip():
    enc = encoder()
    assert enc.keep_alive() == b": keep-alive\n\n"
    assert decode_frames(enc.keep_alive() + enc.content("x")) == decode_frames(encoder().content("x"))


def test_frames_are_compact_json():
    frame = encoder().content("hi")
    assert b", " not in frame and b": " not in frame[len(b"data: ") :]


@pytest.mark.parametrize("text", ["", "héllo 😀", 'quote " and \\ and \n', "\ud800 lone surrogate"])
def test_any_text_round_trips(text):
    # A lone surrogate has no UTF-8 form: it goes out escaped and decodes back the same.
    chunk = decode_frames(encoder().content(text))[0]
    assert chunk["choices"][0]["delta"]["content"] == text


def test_content_after_finish_is_refused():
    enc = encoder()
    enc.finish()
    with pytest.raises(LocalProtocolError, match="content"):
        enc.content("late")
    assert enc.state is EncoderState.FINISHED


def test_nothing_after_done():
    enc = encoder()
    enc.finish()
    enc.done()
    for call in (lambda: enc.content("x"), enc.finish, lambda: enc.usage(USAGE), enc.keep_alive, enc.done):
        with pytest.raises(LocalProtocolError):
            call()


def test_done_before_finish_is_refused():
    with pytest.raises(LocalProtocolError):
        encoder().done()


def test_usage_twice_is_refused_even_when_not_sent():
    enc = encoder(include_usage=False)
    enc.finish()
    assert enc.usage(USAGE) == b""
    with pytest.raises(LocalProtocolError):
        enc.usage(USAGE)


# Every state x every call, h2 style: a call either follows the table or raises
# LocalProtocolError and leaves the state as it was.
_ALLOWED = {
    EncoderState.IDLE: {"content", "finish", "error", "keep_alive"},
    EncoderState.STREAMING: {"content", "finish", "error", "keep_alive"},
    EncoderState.FINISHED: {"usage", "error", "keep_alive", "done"},
    EncoderState.USAGE_SENT: {"keep_alive", "done"},
    EncoderState.ERRORED: {"keep_alive", "done"},
    EncoderState.DONE: set(),
}
_CALLS = {
    "content": lambda enc: enc.content("x"),
    "finish": lambda enc: enc.finish("stop"),
    "usage": lambda enc: enc.usage(USAGE),
    "error": lambda enc: enc.error("boom"),
    "keep_alive": lambda enc: enc.keep_alive(),
    "done": lambda enc: enc.done(),
}


@settings(max_examples=300)
@given(st.lists(st.sampled_from(sorted(_CALLS)), max_size=12), st.booleans())
def test_every_sequence_of_calls_follows_the_table(calls, include_usage):
    enc = encoder(include_usage)
    for name in calls:
        before = enc.state
        if name in _ALLOWED[before]:
            frame = _CALLS[name](enc)
            assert frame == b"" or frame.endswith(b"\n\n")
            assert enc.state is not before or name in ("content", "keep_alive")
        else:
            with pytest.raises(LocalProtocolError):
                _CALLS[name](enc)
            assert enc.state is before


@settings(max_examples=200)
@given(st.lists(st.text(), max_size=10))
def test_streamed_and_non_streamed_give_the_same_text(pieces):
    chunks = decode_frames(full_answer(encoder(include_usage=True), pieces))
    streamed = "".join(
        c["choices"][0]["delta"].get("content", "") for c in chunks if c is not DONE and c["choices"]
    )
    completion = assemble_completion(
        id="chatcmpl-1", created=1700000000, model="llama3", pieces=pieces, usage=USAGE
    )
    assert completion["choices"][0]["message"]["content"] == streamed
    assert json.loads(json.dumps(completion)) == completion


def test_assembled_completion_shape():
    completion = assemble_completion(
        id="chatcmpl-1",
        created=1700000000,
        model="llama3",
        pieces=["Hel", "lo"],
        finish_reason="length",
        message_extra={"citations": []},
    )
    assert completion == {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "llama3",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello", "refusal": None, "citations": []},
                "logprobs": None,
                "finish_reason": "length",
            }
        ],
    }
