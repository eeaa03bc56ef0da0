"""AudioSocket connection: frame layouts, frame order, limits and fuzzing.

Expected bytes are built by hand from the protocol description: one kind byte, a
big-endian unsigned 16-bit payload length, the payload.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.audiosocket import (
    AUDIO_FRAME_BYTES,
    MAX_PAYLOAD_BYTES,
    AudioReceived,
    AudioSocketConnection,
    ConnectionState,
    DtmfReceived,
    ErrorCode,
    ErrorReceived,
    HangupReceived,
    IdentifierReceived,
    Reaction,
    SendAudio,
    SendHangup,
)
from core.errors import LocalProtocolError, RemoteProtocolError

CALL_ID = uuid.UUID("40325ec2-5efd-4bd3-805f-53576e581d13")
SILENCE = bytes(AUDIO_FRAME_BYTES)


def frame(kind: int, payload: bytes = b"") -> bytes:
    return bytes([kind]) + len(payload).to_bytes(2, "big") + payload


IDENTIFIER = frame(0x01, CALL_ID.bytes)
HANGUP = b"\x00\x00\x00"


def opened() -> AudioSocketConnection:
    connection = AudioSocketConnection()
    connection.receive_data(IDENTIFIER)
    connection.events_received()
    return connection


def feed(data: bytes, chunks: str) -> list:
    connection = AudioSocketConnection()
    if chunks == "whole":
        connection.receive_data(data)
    else:
        for i in range(len(data)):
            connection.receive_data(data[i : i + 1])
    return connection.events_received()


CALL = (
    IDENTIFIER
    + frame(0x10, b"\x01\x00\xff\x7f")
    + frame(0x03, b"5")
    + frame(0x10, bytes(320))
    + frame(0xFF, b"\x02")
)
CALL_EVENTS = [
    IdentifierReceived(CALL_ID),
    AudioReceived(b"\x01\x00\xff\x7f"),
    DtmfReceived("5"),
    AudioReceived(bytes(320)),
    ErrorReceived(ErrorCode.FRAME_FORWARDING),
]


@pytest.mark.parametrize("chunks", ["whole", "byte_by_byte"])
def test_a_call_parses_the_same_whole_and_byte_by_byte(chunks):
    assert feed(CALL, chunks) == CALL_EVENTS


def test_trailing_bytes_of_an_unfinished_frame_wait_for_the_rest():
    connection = AudioSocketConnection()
    connection.receive_data(IDENTIFIER + frame(0x10, b"\x01\x02\x03\x04")[:5])
    assert connection.events_received() == [IdentifierReceived(CALL_ID)]
    connection.receive_data(b"\x03\x04")
    assert connection.events_received() == [AudioReceived(b"\x01\x02\x03\x04")]


def test_identifier_gives_the_call_id_as_a_uuid():
    connection = AudioSocketConnection()
    connection.receive_data(IDENTIFIER)
    assert connection.events_received() == [IdentifierReceived(call_id=CALL_ID)]
    assert connection.state is ConnectionState.OPEN


@pytest.mark.parametrize(
    "first",
    [frame(0x10, SILENCE), frame(0x03, b"1"), HANGUP, frame(0xFF, b"\x01")],
    ids=["audio", "dtmf", "hangup", "error"],
)
def test_first_frame_must_be_the_identifier(first):
    connection = AudioSocketConnection()
    with pytest.raises(RemoteProtocolError, match="first frame must be the identifier") as caught:
        connection.receive_data(first)
    # spec: telephony.md "Pbx ticket" — closed without a word.
    assert caught.value.hint is Reaction.CLOSE_SILENTLY
    assert connection.data_to_send() == b""
    assert connection.state is ConnectionState.CLOSED


@pytest.mark.parametrize("size", [0, 15, 17, 36])
def test_identifier_must_be_a_sixteen_byte_uuid(size):
    connection = AudioSocketConnection()
    with pytest.raises(RemoteProtocolError, match="16-byte UUID"):
        connection.receive_data(frame(0x01, bytes(size)))


def test_identifier_comes_only_once_and_a_second_one_hangs_up():
    connection = opened()
    with pytest.raises(RemoteProtocolError) as caught:
        connection.receive_data(IDENTIFIER)
    assert caught.value.hint is Reaction.HANG_UP
    assert connection.data_to_send() == HANGUP


def test_audio_splitting_a_sample_is_refused():
    with pytest.raises(RemoteProtocolError, match="splits a 16-bit sample"):
        opened().receive_data(frame(0x10, b"\x00\x00\x00"))


@pytest.mark.parametrize("digit", "0123456789*#ABCD")
def test_every_keypad_digit_is_reported(digit):
    connection = opened()
    connection.receive_data(frame(0x03, digit.encode()))
    assert connection.events_received() == [DtmfReceived(digit)]


@pytest.mark.parametrize("payload", [b"", b"12", b"x", b"\xff", b"a"])
def test_dtmf_must_be_one_keypad_digit(payload):
    with pytest.raises(RemoteProtocolError, match="keypad digit"):
        opened().receive_data(frame(0x03, payload))


def test_hangup_frame_ends_the_call_and_nothing_may_follow_it():
    connection = opened()
    connection.receive_data(HANGUP)
    assert connection.events_received() == [HangupReceived()]
    assert connection.state is ConnectionState.PEER_HUNG_UP
    with pytest.raises(RemoteProtocolError, match="not allowed in state PEER_HUNG_UP"):
        connection.receive_data(frame(0x10, SILENCE))


def test_hangup_frame_carries_no_payload():
    with pytest.raises(RemoteProtocolError, match="expected none"):
        opened().receive_data(frame(0x00, b"\x01"))


@pytest.mark.parametrize(
    ("payload", "code", "caller_hung_up"),
    [
        (b"", None, False),
        (b"\x01", ErrorCode.CALLER_HANGUP, True),
        (b"\x02", ErrorCode.FRAME_FORWARDING, False),
        (b"\x05", ErrorCode.CALLER_HANGUP | ErrorCode.MEMORY, True),
    ],
)
def test_error_frame_reports_asterisks_code(payload, code, caller_hung_up):
    connection = opened()
    connection.receive_data(frame(0xFF, payload))
    [event] = connection.events_received()
    assert event == ErrorReceived(code)
    assert event.caller_hung_up is caller_hung_up
    assert connection.state is ConnectionState.PEER_HUNG_UP


def test_error_code_is_at_most_one_byte():
    with pytest.raises(RemoteProtocolError, match="at most one"):
        opened().receive_data(frame(0xFF, b"\x01\x02"))


@pytest.mark.parametrize("kind", [0x02, 0x04, 0x20, 0xFE])
def test_unknown_frame_kind_is_refused(kind):
    with pytest.raises(RemoteProtocolError, match="unknown frame kind"):
        opened().receive_data(frame(kind, b"\x00\x00"))


# Asterisk's channel driver (``Dial(AudioSocket/…/c(slin16))``): one kind per rate.
KIND_RATES = [(0x11, 12000), (0x12, 16000), (0x13, 24000), (0x14, 32000), (0x15, 44100),
              (0x16, 48000), (0x17, 96000), (0x18, 192000)]


@pytest.mark.parametrize(("kind", "rate"), KIND_RATES)
def test_higher_rate_audio_is_read_at_its_rate_and_answered_in_its_kind(kind, rate):
    connection = opened()
    twenty_ms = bytes(rate // 50 * 2)
    connection.receive_data(frame(kind, twenty_ms))
    assert connection.events_received() == [AudioReceived(twenty_ms, rate=rate)]
    assert connection.rate == rate
    connection.send(SendAudio(twenty_ms))
    assert connection.data_to_send() == frame(kind, twenty_ms)


def test_our_frames_must_be_20_ms_at_the_callers_rate():
    connection = opened()
    connection.receive_data(frame(0x12, bytes(640)))
    with pytest.raises(LocalProtocolError, match="640 bytes"):
        connection.send(SendAudio(SILENCE))


def test_before_any_caller_audio_we_answer_at_8_khz():
    connection = opened()
    connection.send(SendAudio(SILENCE))
    assert connection.data_to_send() == frame(0x10, SILENCE)


def test_frame_at_the_32_kib_cap_is_read():
    connection = opened()
    connection.receive_data(frame(0x10, bytes(MAX_PAYLOAD_BYTES)))
    assert connection.events_received() == [AudioReceived(bytes(MAX_PAYLOAD_BYTES))]


def test_oversized_frame_is_refused_from_its_header_alone():
    connection = opened()
    with pytest.raises(RemoteProtocolError, match="exceeds"):
        connection.receive_data(bytes([0x10]) + (MAX_PAYLOAD_BYTES + 1).to_bytes(2, "big"))


def test_closing_the_socket_is_a_hangup():
    connection = opened()
    connection.receive_data(b"")
    assert connection.events_received() == [HangupReceived(closed_socket=True)]
    assert connection.state is ConnectionState.CLOSED


def test_closing_before_the_identifier_reports_nothing():
    connection = AudioSocketConnection()
    connection.receive_data(b"")
    assert connection.events_received() == []
    assert connection.state is ConnectionState.CLOSED


def test_closing_inside_a_frame_is_a_protocol_error():
    connection = opened()
    connection.receive_data(frame(0x10, SILENCE)[:10])
    with pytest.raises(RemoteProtocolError, match="inside a frame"):
        connection.receive_data(b"")


def test_events_before_a_fault_are_kept_and_the_fault_is_sticky():
    connection = AudioSocketConnection()
    with pytest.raises(RemoteProtocolError) as caught:
        connection.receive_data(IDENTIFIER + frame(0x03, b"7") + frame(0x03, b"?"))
    assert connection.events_received() == [IdentifierReceived(CALL_ID), DtmfReceived("7")]
    with pytest.raises(RemoteProtocolError) as again:
        connection.receive_data(frame(0x03, b"1"))
    assert again.value is caught.value


def test_audio_frame_layout_is_kind_length_payload():
    connection = opened()
    pcm = bytes(range(256)) + bytes(64)
    connection.send(SendAudio(pcm))
    assert connection.data_to_send() == b"\x10\x01\x40" + pcm


def test_hangup_frame_layout_is_three_zero_bytes():
    connection = opened()
    connection.send(SendHangup())
    assert connection.data_to_send() == b"\x00\x00\x00"
    assert connection.state is ConnectionState.HANGING_UP


@pytest.mark.parametrize("size", [0, 2, 318, 319, 321, 640])
def test_we_send_audio_only_in_20_ms_frames(size):
    connection = opened()
    with pytest.raises(LocalProtocolError, match="320 bytes"):
        connection.send(SendAudio(bytes(size)))
    assert connection.data_to_send() == b""


@pytest.mark.parametrize("event", [SendAudio(SILENCE), SendHangup()], ids=["audio", "hangup"])
def test_nothing_is_sent_before_the_identifier(event):
    with pytest.raises(LocalProtocolError, match="AWAITING_IDENTIFIER"):
        AudioSocketConnection().send(event)


@pytest.mark.parametrize("event", [SendAudio(SILENCE), SendHangup()], ids=["audio", "hangup"])
def test_sending_after_our_hangup_is_a_local_error(event):
    connection = opened()
    connection.send(SendHangup())
    with pytest.raises(LocalProtocolError, match="HANGING_UP"):
        connection.send(event)


def test_after_the_peer_hangs_up_we_may_only_hang_up():
    connection = opened()
    connection.receive_data(HANGUP)
    with pytest.raises(LocalProtocolError):
        connection.send(SendAudio(SILENCE))
    connection.send(SendHangup())
    assert connection.data_to_send() == HANGUP
    assert connection.state is ConnectionState.CLOSED


def test_frames_already_on_the_way_after_our_hangup_are_still_read():
    connection = opened()
    connection.send(SendHangup())
    connection.receive_data(frame(0x10, SILENCE) + frame(0x03, b"#") + HANGUP)
    assert connection.events_received() == [
        AudioReceived(SILENCE),
        DtmfReceived("#"),
        HangupReceived(),
    ]
    assert connection.state is ConnectionState.CLOSED


def test_a_fault_after_our_hangup_closes_silently():
    connection = opened()
    connection.send(SendHangup())
    connection.data_to_send()
    with pytest.raises(RemoteProtocolError) as caught:
        connection.receive_data(IDENTIFIER)
    assert caught.value.hint is Reaction.CLOSE_SILENTLY
    assert connection.data_to_send() == b""


# -- properties -----------------------------------------------------------------------


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    """Cut ``data`` at the given points; no piece is empty, since ``b""`` means the
    peer closed the socket."""
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]
    return [piece for piece in pieces if piece]


@pytest.mark.parametrize("prefix", [b"", IDENTIFIER], ids=["first_bytes", "after_identifier"])
@given(data=st.binary(max_size=300), cuts=st.lists(st.integers(min_value=0), max_size=20))
def test_any_bytes_give_events_or_a_remote_protocol_error(prefix, data, cuts):
    connection = AudioSocketConnection()
    try:
        for chunk in split(prefix + data, cuts):
            connection.receive_data(chunk)
        connection.receive_data(b"")
    except RemoteProtocolError:
        pass
    connection.events_received()


well_formed_frames = st.one_of(
    st.tuples(st.sampled_from([0x10, *(kind for kind, _ in KIND_RATES)]),
              st.binary(max_size=64).filter(lambda b: len(b) % 2 == 0)
              ).map(lambda kb: frame(*kb)),
    st.sampled_from("0123456789*#ABCD").map(lambda d: frame(0x03, d.encode())),
)


@given(st.lists(well_formed_frames, max_size=20), st.lists(st.integers(min_value=0), max_size=30))
def test_how_bytes_are_split_never_changes_the_events(frames, cuts):
    data = IDENTIFIER + b"".join(frames) + HANGUP
    whole = AudioSocketConnection()
    whole.receive_data(data)
    pieces = AudioSocketConnection()
    for chunk in split(data, cuts):
        pieces.receive_data(chunk)
    assert pieces.events_received() == whole.events_received()


@given(st.sampled_from([(0x10, 8000), *KIND_RATES]),
       st.lists(st.sampled_from(["audio", "short", "line_rate", "hangup"]), max_size=30))
def test_we_only_ever_send_full_audio_frames_of_the_callers_kind_then_one_hangup(
        caller, actions):
    kind_in, rate = caller
    connection = opened()
    connection.receive_data(frame(kind_in, bytes(4)))
    whole = bytes(rate // 50 * 2)
    for action in actions:
        try:
            if action == "hangup":
                connection.send(SendHangup())
            else:
                pcm = {"audio": whole, "short": b"", "line_rate": SILENCE}[action]
                connection.send(SendAudio(pcm))
        except LocalProtocolError:
            pass
    sent = frames_of(connection.data_to_send())
    if sent and sent[-1] == (0x00, b""):
        sent.pop()
    assert all(kind == kind_in and len(payload) == len(whole) for kind, payload in sent)


def frames_of(data: bytes) -> list[tuple[int, bytes]]:
    """Split bytes we sent into (kind, payload), reading headers by hand."""
    frames = []
    while data:
        length = int.from_bytes(data[1:3], "big")
        frames.append((data[0], data[3 : 3 + length]))
        data = data[3 + length :]
    return frames
