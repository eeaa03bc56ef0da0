"""Carrier media stream: message shapes, message order, marks and fuzzing.

Inbound messages follow Twilio's Media Streams examples (strings for sequence numbers,
chunks and timestamps); expected outbound messages are written out by hand.
"""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.carrier_media import (
    MAX_MESSAGE_BYTES,
    CarrierConnection,
    CarrierStreamClient,
    CloseCode,
    StreamState,
)
from core.carrier_media import (  # what the carrier's messages become
    DtmfReceived,
    MarkReceived,
    MediaReceived,
    MessageIgnored,
    StreamConnected,
    StreamStarted,
    StreamStopped,
)
from core.carrier_media import ClearAudio, SendMark, SendMedia  # what this service sends
from core.errors import LocalProtocolError, RemoteProtocolError

SID = "MZ18ad3ab5a668481ce02b83e7395059f0"
CALL = "CA5d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4"
ACCOUNT = "AC0123456789abcdef0123456789abcdef"


def connected() -> dict:
    return {"event": "connected", "protocol": "Call", "version": "1.0.0"}


def start(**start_fields) -> dict:
    body = {
        "accountSid": ACCOUNT,
        "streamSid": SID,
        "callSid": CALL,
        "tracks": ["inbound"],
        "customParameters": {"ticket": "t-123"},
        "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
    }
    body.update(start_fields)
    return {"event": "start", "sequenceNumber": "1", "start": body, "streamSid": SID}


def media(payload: bytes = b"\xff\x7f", chunk: str = "1", timestamp: str = "20") -> dict:
    body = {"track": "inbound", "chunk": chunk, "timestamp": timestamp}
    body["payload"] = base64.b64encode(payload).decode()
    return {"event": "media", "sequenceNumber": "2", "media": body, "streamSid": SID}


def dtmf(digit: str = "1") -> dict:
    return {
        "event": "dtmf",
        "streamSid": SID,
        "sequenceNumber": "3",
        "dtmf": {"track": "inbound_track", "digit": digit},
    }


def mark(name: str) -> dict:
    return {"event": "mark", "sequenceNumber": "4", "streamSid": SID, "mark": {"name": name}}


def stop() -> dict:
    return {
        "event": "stop",
        "sequenceNumber": "5",
        "streamSid": SID,
        "stop": {"accountSid": ACCOUNT, "callSid": CALL},
    }


def streaming() -> CarrierConnection:
    connection = CarrierConnection()
    for message in (connected(), start()):
        connection.receive_text(json.dumps(message))
    connection.events_received()
    return connection


def refused(
    connection: CarrierConnection, message, code=CloseCode.PROTOCOL_ERROR
) -> RemoteProtocolError:
    text = message if isinstance(message, str) else json.dumps(message)
    with pytest.raises(RemoteProtocolError) as caught:
        connection.receive_text(text)
    assert caught.value.hint is code
    assert connection.state is StreamState.FAILED
    return caught.value


def test_a_whole_stream_gives_one_event_per_message():
    connection = CarrierConnection()
    for message in (connected(), start(), media(), dtmf("#"), stop()):
        connection.receive_text(json.dumps(message))
    assert connection.events_received() == [
        StreamConnected(protocol="Call", version="1.0.0"),
        StreamStarted(SID, CALL, ACCOUNT, ("inbound",), {"ticket": "t-123"}),
        MediaReceived(ulaw=b"\xff\x7f", track="inbound", chunk=1, timestamp=20),
        DtmfReceived("#"),
        StreamStopped(call_sid=CALL),
    ]
    assert connection.state is StreamState.STOPPED


@pytest.mark.parametrize("trailing", [" x", "{}", json.dumps(media()), "\x00"])
def test_a_message_with_trailing_bytes_is_refused(trailing):
    # A text message holds exactly one JSON message; anything after it is not ignored.
    refused(streaming(), json.dumps(media()) + trailing)


def test_a_message_cut_into_pieces_is_refused_piece_by_piece():
    # The WebSocket delivers whole messages: a piece of one is never buffered for the
    # rest, it is a malformed message of its own.
    text = json.dumps(media())
    connection = streaming()
    refused(connection, text[: len(text) // 2])
    with pytest.raises(RemoteProtocolError):  # the failure sticks
        connection.receive_text(text[len(text) // 2:])


def test_connected_may_be_omitted_by_a_compatible_carrier():
    connection = CarrierConnection()
    connection.receive_text(json.dumps(start()))
    assert connection.state is StreamState.STREAMING
    assert connection.stream_sid == SID


def test_custom_parameters_may_be_absent():
    message = start()
    del message["start"]["customParameters"]
    connection = CarrierConnection()
    connection.receive_text(json.dumps(message))
    [event] = connection.events_received()
    assert event.custom_parameters == {}


def test_media_before_start_is_refused():
    connection = CarrierConnection()
    connection.receive_text(json.dumps(connected()))
    refused(connection, media())


@pytest.mark.parametrize("message", [connected(), start()], ids=["connected", "start"])
def test_stream_is_described_only_once(message):
    refused(streaming(), message)


def test_nothing_may_arrive_after_stop():
    connection = streaming()
    connection.receive_text(json.dumps(stop()))
    refused(connection, media())


@pytest.mark.parametrize(
    ("field", "value"),
    [("encoding", "audio/l16"), ("sampleRate", 16000), ("sampleRate", "8000"), ("channels", 2)],
)
def test_start_requires_mulaw_8000_hz_mono(field, value):
    message = start()
    message["start"]["mediaFormat"][field] = value
    refused(CarrierConnection(), message, CloseCode.UNSUPPORTED_DATA)


def test_messages_must_name_the_started_stream():
    message = media()
    message["streamSid"] = "MZother"
    refused(streaming(), message)


def test_start_must_name_one_stream():
    message = start()
    message["streamSid"] = "MZother"
    refused(CarrierConnection(), message)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[]",
        '"media"',
        "[" * 5000,
        "1" * 5000,
        '{"event": 5}',
        '{"event": "media", "streamSid": "' + SID + '"}',
        '{"event": "media", "streamSid": "'
        + SID
        + '", "media": {"payload": "!!", "track": "inbound", "chunk": "1", "timestamp": "1"}}',
        '{"event": "media", "streamSid": "'
        + SID
        + '", "media": {"payload": "", "track": "inbound", "chunk": "-1", "timestamp": "1"}}',
        '{"event": "media", "streamSid": "'
        + SID
        + '", "media": {"payload": "", "track": "inbound", "chunk": "\u0661", "timestamp": "1"}}',
        '{"event": "dtmf", "streamSid": "' + SID + '", "dtmf": {"digit": "12"}}',
        '{"event": "stop", "streamSid": "' + SID + '", "stop": []}',
    ],
)
def test_malformed_messages_are_protocol_errors(text):
    refused(streaming(), text)


def test_message_over_32_kib_is_too_big():
    text = json.dumps(media(bytes(30_000)))
    assert len(text) > MAX_MESSAGE_BYTES
    refused(streaming(), text, CloseCode.MESSAGE_TOO_BIG)


def carrier_side() -> CarrierStreamClient:
    return CarrierStreamClient(stream_sid=SID, call_sid="CA1", account_sid="AC1",
                               custom_parameters={})


@pytest.mark.parametrize("side", [streaming, carrier_side], ids=["service", "carrier"])
def test_binary_messages_are_refused_and_the_failure_sticks(side):
    connection = side()
    with pytest.raises(RemoteProtocolError) as caught:
        connection.receive_binary(b"\x00")
    assert caught.value.hint is CloseCode.UNSUPPORTED_DATA
    assert connection.state.name == "FAILED"
    with pytest.raises(RemoteProtocolError) as again:
        connection.receive_text(json.dumps(media()))
    assert again.value is caught.value


def test_counters_may_be_json_integers():
    connection = streaming()
    message = media()
    message["media"].update(chunk=7, timestamp=140)
    connection.receive_text(json.dumps(message))
    [event] = connection.events_received()
    assert (event.chunk, event.timestamp) == (7, 140)


def test_outbound_messages_are_laid_out_as_the_carrier_expects():
    connection = streaming()
    connection.send_media(b"\x00\xff\x7f")
    connection.send_mark("turn-1")
    connection.clear()
    assert connection.data_to_send() == [
        '{"event":"media","streamSid":"' + SID + '","media":{"payload":"AP9/"}}',
        '{"event":"mark","streamSid":"' + SID + '","mark":{"name":"turn-1"}}',
        '{"event":"clear","streamSid":"' + SID + '"}',
    ]


def test_shorthands_equal_sending_the_events():
    by_events, by_methods = streaming(), streaming()
    for event in (SendMedia(b"\x01"), SendMark("m"), ClearAudio()):
        by_events.send(event)
    by_methods.send_media(b"\x01")
    by_methods.send_mark("m")
    by_methods.clear()
    assert by_events.data_to_send() == by_methods.data_to_send()


@pytest.mark.parametrize("event", [SendMedia(b"\x01"), SendMark("m"), ClearAudio()])
def test_nothing_is_sent_before_start_or_after_stop(event):
    with pytest.raises(LocalProtocolError, match="OPENED"):
        CarrierConnection().send(event)
    connection = streaming()
    connection.receive_text(json.dumps(stop()))
    with pytest.raises(LocalProtocolError, match="STOPPED"):
        connection.send(event)


def test_empty_audio_is_never_sent():
    with pytest.raises(LocalProtocolError, match="without audio"):
        streaming().send_media(b"")


def test_audio_that_would_overflow_a_message_is_a_local_error():
    with pytest.raises(LocalProtocolError, match="exceeds"):
        streaming().send_media(bytes(MAX_MESSAGE_BYTES))


def test_returned_mark_after_its_audio_played_was_heard():
    connection = streaming()
    connection.send_mark("a")
    assert connection.pending_marks == ("a",)
    connection.receive_text(json.dumps(mark("a")))
    assert connection.events_received() == [MarkReceived("a", heard=True)]
    assert connection.pending_marks == ()


def test_marks_returned_for_audio_sent_before_a_clear_were_not_heard():
    connection = streaming()
    connection.send_mark("before")
    connection.clear()
    connection.send_mark("after")
    assert connection.pending_marks == ("after",)
    for name in ("before", "after"):
        connection.receive_text(json.dumps(mark(name)))
    assert connection.events_received() == [
        MarkReceived("before", heard=False),
        MarkReceived("after", heard=True),
    ]


def test_a_mark_name_may_be_reused_once_returned():
    connection = streaming()
    connection.send_mark("a")
    with pytest.raises(LocalProtocolError, match="awaiting"):
        connection.send_mark("a")
    connection.receive_text(json.dumps(mark("a")))
    connection.send_mark("a")


def test_a_cleared_mark_name_waits_for_its_return_too():
    connection = streaming()
    connection.send_mark("a")
    connection.clear()
    with pytest.raises(LocalProtocolError):
        connection.send_mark("a")


def test_empty_mark_name_is_a_local_error():
    with pytest.raises(LocalProtocolError):
        streaming().send_mark("")


def test_a_mark_never_sent_is_logged_and_ignored():
    connection = streaming()
    connection.send_mark("mine")
    connection.receive_text(json.dumps(mark("stranger")))
    assert connection.events_received() == [
        MessageIgnored("mark 'stranger' returned but never sent")]
    assert connection.state is StreamState.STREAMING
    assert connection.pending_marks == ("mine",)


@pytest.mark.parametrize("message", [
    {"event": "hello"},
    {"event": "transcription", "streamSid": SID, "transcription": {"text": "hi"}},
    {"event": "future", "streamSid": "MZsomewhere-else"},
])
def test_an_unknown_event_is_ignored_and_the_stream_goes_on(message):
    connection = streaming()
    connection.receive_text(json.dumps(message))
    [event] = connection.events_received()
    assert isinstance(event, MessageIgnored) and repr(message["event"]) in event.reason
    connection.receive_text(json.dumps(media()))
    assert isinstance(connection.events_received()[0], MediaReceived)


def test_connected_without_protocol_or_version_is_accepted():
    connection = CarrierConnection()
    connection.receive_text(json.dumps({"event": "connected"}))
    connection.receive_text(json.dumps(start()))
    assert connection.events_received()[0] == StreamConnected(protocol="", version="")
    assert connection.state is StreamState.STREAMING


# -- properties -----------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
wire_keys = st.sampled_from(
    [
        "event",
        "streamSid",
        "start",
        "media",
        "payload",
        "track",
        "chunk",
        "timestamp",
        "mark",
        "name",
        "dtmf",
        "digit",
        "stop",
        "callSid",
        "mediaFormat",
        "tracks",
        "customParameters",
    ]
)
wire_events = st.sampled_from(["connected", "start", "media", "dtmf", "mark", "stop", "clear", "x"])
jsonish_messages = st.recursive(
    wire_events | st.just(SID) | st.text(max_size=6) | st.integers(),
    lambda inner: st.dictionaries(wire_keys, inner, max_size=6) | st.lists(inner, max_size=3),
    max_leaves=15,
).map(json.dumps)


def feed_all(connection: CarrierConnection, texts: list[str]) -> None:
    before = connection.state
    try:
        for text in texts:
            connection.receive_text(text)
            events = connection.events_received()
            # What the stream does not know is ignored, never a reason to end it.
            if any(isinstance(event, MessageIgnored) for event in events):
                assert len(events) == 1 and connection.state is before
            before = connection.state
    except RemoteProtocolError:
        pass


@given(st.lists(st.text(max_size=200), max_size=5))
def test_any_text_gives_events_or_a_remote_protocol_error(texts):
    feed_all(CarrierConnection(), texts)


@given(st.lists(json_values.map(json.dumps), max_size=5))
def test_any_json_gives_events_or_a_remote_protocol_error(texts):
    feed_all(streaming(), texts)


@given(st.lists(jsonish_messages, max_size=8))
def test_json_shaped_like_the_wire_gives_events_or_a_remote_protocol_error(texts):
    feed_all(streaming(), texts)


@given(
    st.lists(
        st.one_of(
            st.binary(min_size=1, max_size=40).map(lambda b: ("media", b)),
            st.text(min_size=1, max_size=5).map(lambda n: ("mark", n)),
            st.just(("clear", None)),
            st.just(("echo", None)),
        ),
        max_size=30,
    )
)
def test_every_mark_sent_comes_back_exactly_once_with_the_right_verdict(actions):
    connection = streaming()
    heard_expected: dict[str, bool] = {}
    for action, value in actions:
        if action == "media":
            connection.send_media(value)
        elif action == "mark" and value not in heard_expected:
            connection.send_mark(value)
            heard_expected[value] = True
        elif action == "clear":
            connection.clear()
            heard_expected = {name: False for name in heard_expected}
        elif action == "echo" and heard_expected:
            name = next(iter(heard_expected))
            connection.receive_text(json.dumps(mark(name)))
            [event] = connection.events_received()
            assert event == MarkReceived(name, heard=heard_expected.pop(name))
        elif action == "echo":
            # A mark returned twice (or never sent) is ignored and changes nothing.
            connection.receive_text(json.dumps(mark("never-sent")))
            [event] = connection.events_received()
            assert isinstance(event, MessageIgnored)
    assert set(connection.pending_marks) == {n for n, heard in heard_expected.items() if heard}


def paths(value, prefix=()):
    """Every key path inside a nested message."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from paths(inner, (*prefix, key))


@given(
    st.sampled_from([connected, start, media, dtmf, stop]),
    st.data(),
    json_values,
    st.booleans(),
)
def test_a_valid_message_with_one_field_broken_gives_an_event_or_a_protocol_error(
    make, data, replacement, delete
):
    message = make()
    path = data.draw(st.sampled_from(list(paths(message))))
    parent = message
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    connection = CarrierConnection() if make in (connected, start) else streaming()
    feed_all(connection, [json.dumps(message)])
