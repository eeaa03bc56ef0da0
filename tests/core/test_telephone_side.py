"""The telephone network's side of both audio connections (what the call simulator
speaks), against the service's side, and the caller's playout."""

from __future__ import annotations

import json
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.audiosocket import (
    AudioReceived,
    AudioSocketClient,
    AudioSocketConnection,
    ClientState,
    DtmfReceived,
    HangupReceived,
    IdentifierReceived,
    SendAudio,
    SendHangup,
)
from core.carrier_media import (
    AudioArrived,
    CarrierConnection,
    CarrierStreamClient,
    ClearArrived,
    MarkArrived,
    MarkReceived,
    MediaReceived,
    StreamStarted,
)
from core.errors import LocalProtocolError, RemoteProtocolError
from core.playout import Playout

CALL = uuid.UUID("12345678-1234-5678-1234-567812345678")
FRAME = bytes(range(160)) * 2


def feed(receiver, data: bytes, split: str) -> None:
    if split == "whole":
        receiver.receive_data(data)
    else:
        for index in range(len(data)):
            receiver.receive_data(data[index:index + 1])


@pytest.mark.parametrize("split", ["whole", "byte by byte"])
def test_asterisk_side_introduces_the_call_then_talks_with_the_service(split):
    asterisk, service = AudioSocketClient(CALL), AudioSocketConnection()
    asterisk.send_audio(FRAME)
    asterisk.send_dtmf("#")
    feed(service, asterisk.data_to_send(), split)
    assert service.events_received() == [IdentifierReceived(CALL), AudioReceived(FRAME),
                                         DtmfReceived("#")]
    service.send(SendAudio(FRAME))
    service.send(SendHangup())
    feed(asterisk, service.data_to_send(), split)
    assert asterisk.events_received() == [AudioReceived(FRAME), HangupReceived()]
    assert asterisk.state is ClientState.SERVICE_HUNG_UP


def test_asterisk_side_hangs_up_by_closing_and_the_service_sees_a_closed_socket():
    asterisk, service = AudioSocketClient(CALL), AudioSocketConnection()
    service.receive_data(asterisk.data_to_send())
    asterisk.hang_up()
    assert asterisk.data_to_send() == b""
    service.receive_data(b"")
    assert service.events_received()[-1] == HangupReceived(closed_socket=True)
    with pytest.raises(LocalProtocolError):
        asterisk.send_audio(FRAME)


@pytest.mark.parametrize("frame", [b"\x03\x00\x011", b"\x01\x00\x10" + bytes(16), b"\xff\x00\x00",
                                   b"\x19\x00\x02\x00\x00", b"\x10\x00\x00"])
def test_a_frame_asterisk_does_not_accept_drops_the_call_without_a_word(frame):
    asterisk = AudioSocketClient(CALL)
    asterisk.data_to_send()
    asterisk.send_audio(FRAME)  # queued, not yet written: a dropped call writes nothing
    with pytest.raises(RemoteProtocolError):
        asterisk.receive_data(frame + b"\x10\x00\x02\x00\x00")
    assert asterisk.data_to_send() == b""
    assert asterisk.state is ClientState.FAILED
    with pytest.raises(RemoteProtocolError):
        asterisk.receive_data(b"\x00\x00\x00")


def test_asterisk_at_slin16_sends_kind_0x12_and_takes_audio_of_any_rate():
    asterisk = AudioSocketClient(CALL, rate=16000)
    asterisk.data_to_send()
    asterisk.send_audio(bytes(640))
    assert asterisk.data_to_send() == b"\x12\x02\x80" + bytes(640)
    asterisk.receive_data(b"\x12\x02\x80" + bytes(640))
    assert asterisk.events_received() == [AudioReceived(bytes(640), rate=16000)]
    assert asterisk.rates_received == {16000}


@given(st.binary(max_size=400))
def test_any_bytes_from_the_service_give_events_or_a_remote_protocol_error(data):
    asterisk = AudioSocketClient(CALL)
    try:
        asterisk.receive_data(data)
        asterisk.receive_data(b"")
    except RemoteProtocolError:
        pass
    for event in asterisk.events_received():
        assert isinstance(event, (AudioReceived, HangupReceived))


def carrier_pair() -> tuple[CarrierStreamClient, CarrierConnection]:
    carrier = CarrierStreamClient(stream_sid="MZ1", call_sid="CA1", account_sid="AC1",
                                  custom_parameters={"ticket": "t-1"})
    service = CarrierConnection()
    for message in carrier.data_to_send():
        service.receive_text(message)
    return carrier, service


def test_carrier_side_starts_the_stream_with_the_ticket_and_sends_counted_media():
    carrier, service = carrier_pair()
    started = [e for e in service.events_received() if isinstance(e, StreamStarted)]
    assert started[0].custom_parameters == {"ticket": "t-1"}
    assert started[0].stream_sid == "MZ1" and started[0].tracks == ("inbound",)
    carrier.send_media(b"\xff" * 160, 0)
    carrier.send_media(b"\x7f" * 160, 20)
    for message in carrier.data_to_send():
        service.receive_text(message)
    media = service.events_received()
    assert [(m.chunk, m.timestamp, m.ulaw[:1]) for m in media if isinstance(m, MediaReceived)] \
        == [(1, 0, b"\xff"), (2, 20, b"\x7f")]


def test_marks_come_back_once_played_and_at_once_when_cleared():
    carrier, service = carrier_pair()
    service.events_received()
    service.send_media(b"\x00" * 320)
    service.send_mark("first")
    service.send_media(b"\x00" * 160)
    service.send_mark("second")
    for message in service.data_to_send():
        carrier.receive_text(message)
    assert [type(e) for e in carrier.events_received()] == [AudioArrived, MarkArrived,
                                                            AudioArrived, MarkArrived]
    carrier.play()
    assert carrier.data_to_send() == []
    carrier.play()  # the mark right behind the second frame is reached with it
    for message in carrier.data_to_send():
        service.receive_text(message)
    assert service.events_received() == [MarkReceived("first", heard=True)]
    service.clear()
    for message in service.data_to_send():
        carrier.receive_text(message)
    assert carrier.events_received() == [ClearArrived(discarded_bytes=160)]
    for message in carrier.data_to_send():
        service.receive_text(message)
    assert service.events_received() == [MarkReceived("second", heard=False)]
    assert carrier.play().audio == b"\xff" * 160


def test_stop_ends_the_stream_and_names_the_call():
    carrier, service = carrier_pair()
    carrier.stop()
    stop = json.loads(carrier.data_to_send()[-1])
    assert stop["event"] == "stop" and stop["stop"]["callSid"] == "CA1"
    with pytest.raises(LocalProtocolError):
        carrier.send_media(b"\xff", 0)


@pytest.mark.parametrize("text", ["{}", "[]", "not json", '{"event":"media","streamSid":"MZ2",'
                                  '"media":{"payload":""}}', '{"event":"dance","streamSid":"MZ1"}',
                                  '{"event":"media","streamSid":"MZ1","media":{"payload":"@@"}}',
                                  '{"event":"mark","streamSid":"MZ1","mark":{"name":""}}'])
def test_a_message_the_carrier_would_not_take_is_a_remote_protocol_error(text):
    carrier, _ = carrier_pair()
    with pytest.raises(RemoteProtocolError):
        carrier.receive_text(text)
    with pytest.raises(RemoteProtocolError):
        carrier.receive_text('{"event":"clear","streamSid":"MZ1"}')


@given(st.text(max_size=200))
def test_any_text_from_the_service_gives_events_or_a_remote_protocol_error(text):
    carrier, _ = carrier_pair()
    try:
        carrier.receive_text(text)
    except RemoteProtocolError:
        pass


def test_playout_plays_in_frames_pads_with_silence_and_drains():
    playout = Playout(4, b"\x00")
    playout.push_audio(b"abcdef")
    playout.push_mark("m")
    first, second, third = playout.take(), playout.take(), playout.take()
    assert (first.audio, first.from_line, first.marks) == (b"abcd", True, ())
    assert (second.audio, second.line_audio, second.marks) == (b"ef\x00\x00", b"ef", ("m",))
    assert (third.audio, third.from_line) == (b"\x00" * 4, False)
    playout.push_audio(b"xyz")
    assert playout.drain() == b"xyz" and playout.queued_bytes == 0
