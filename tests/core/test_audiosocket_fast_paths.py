"""AudioSocket: the per-frame fast paths agree with the transition tables.

``AudioSocketConnection`` shortcuts its tables for caller audio and our audio, the two
things that happen every 20 ms. ``TableOnly`` is the same connection with both
shortcuts removed, so every frame and every send goes through the tables; fed the same
bytes, cut anywhere, and asked to send the same things, both must say the same.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.audiosocket import (
    AUDIO_KIND_RATES,
    AudioReceived,
    AudioSocketConnection,
    ConnectionState,
    Kind,
    SendAudio,
    SendHangup,
    frame_bytes,
)
from core.audiosocket import _connection
from core.errors import LocalProtocolError, RemoteProtocolError
from tests.core.test_audiosocket import frame, split


class TableOnly(AudioSocketConnection):
    """The connection without its fast paths: the tables decide everything."""

    _handle_frame = AudioSocketConnection._handle_frame_by_table
    send = AudioSocketConnection._send_by_table  # type: ignore[assignment]


class WholeFramesFirst(AudioSocketConnection):
    """Every read offered to ``audio_in`` first, as the transport does; what it takes
    stands for the event the tables would have made of it. Likewise every send of
    audio to ``audio_out``."""

    def receive_data(self, data: bytes) -> None:
        pcm = self.audio_in(data)
        if pcm is None:
            super().receive_data(data)
        else:
            self._events.append(AudioReceived(pcm=pcm, rate=self.rate))

    def send(self, event: SendAudio | SendHangup) -> None:
        """Audio offered to ``audio_out`` first, as the player's writer does; what it
        gives stands for what ``send`` would have queued."""
        wire = self.audio_out(event.pcm) if type(event) is SendAudio else None
        if wire is None:
            super().send(event)
        else:
            self._outgoing.append(wire)


def test_a_read_of_one_whole_audio_frame_is_taken_at_once():
    connection = AudioSocketConnection()
    identifier = frame(Kind.IDENTIFIER, uuid.UUID(int=1).bytes)
    audio = frame(Kind.AUDIO, bytes(range(160)) * 2)
    assert connection.audio_in(audio) is None  # before the identifier: the tables' say
    connection.receive_data(identifier)
    connection.events_received()
    assert connection.audio_in(audio) == bytes(range(160)) * 2
    assert connection.events_received() == [] and connection.state is ConnectionState.OPEN
    for not_whole in (audio[:-1], audio + audio[:1], frame(Kind.AUDIO, b"odd"),
                      frame(Kind.DTMF, b"1"), frame(Kind.AUDIO_SLIN16, bytes(640))):
        assert connection.audio_in(not_whole) is None
    connection.receive_data(audio[:5])  # a frame begun: the rest is the buffer's
    assert connection.audio_in(audio) is None


def test_our_audio_is_laid_out_at_once_when_nothing_waits_to_be_sent():
    connection = AudioSocketConnection()
    silence = bytes(frame_bytes(connection.rate))
    assert connection.audio_out(silence) is None  # before the identifier: the tables' say
    connection.receive_data(frame(Kind.IDENTIFIER, uuid.UUID(int=1).bytes))
    assert connection.audio_out(silence) == frame(Kind.AUDIO, silence)
    assert connection.data_to_send() == b""  # nothing was queued
    with pytest.raises(LocalProtocolError, match="got 319"):
        connection.audio_out(silence[:-1])
    connection.send(SendAudio(silence))
    assert connection.audio_out(silence) is None  # behind what waits to be sent
    connection.data_to_send()
    connection.send(SendHangup())
    assert connection.audio_out(silence) is None and connection.data_to_send() == frame(
        Kind.HANGUP)


def test_the_shortcut_states_are_read_off_the_tables():
    audio_stays = {state for state in ConnectionState
                   if all(_connection._INBOUND.get((state, kind)) is state
                          for kind in AUDIO_KIND_RATES)}
    assert _connection._AUDIO_STAYS == audio_stays == {ConnectionState.OPEN,
                                                       ConnectionState.HANGING_UP}
    assert _connection._SENDING_AUDIO_STAYS == {ConnectionState.OPEN}
    assert _connection._PEER_MAY_HANG_UP == {state for state, kind in _connection._INBOUND
                                             if kind == Kind.HANGUP}
    assert _connection._WE_MAY_HANG_UP == {state for state, kind in _connection._OUTBOUND
                                           if kind is SendHangup}


_AUDIO_KINDS = sorted(AUDIO_KIND_RATES)
_KINDS = [int(kind) for kind in Kind] + [0x02, 0x04, 0x20, 0xFE]

_frames = st.one_of(
    # Mostly audio, as a call is: even and odd lengths, the line's kind most often.
    st.tuples(st.sampled_from([Kind.AUDIO] * 8 + _AUDIO_KINDS), st.integers(0, 40)).map(
        lambda kind_size: frame(kind_size[0], bytes(range(kind_size[1])))),
    st.sampled_from("0123456789*#ABCDx").map(lambda digit: frame(Kind.DTMF, digit.encode())),
    st.just(frame(Kind.IDENTIFIER, uuid.UUID(int=7).bytes)),
    st.sampled_from([frame(Kind.HANGUP), frame(Kind.ERROR), frame(Kind.ERROR, b"\x01")]),
    # Anything at all: unknown kinds, payloads that do not fit their kind.
    st.tuples(st.sampled_from(_KINDS), st.binary(max_size=20)).map(lambda kb: frame(*kb)),
    # A header announcing more than the cap.
    st.just(bytes([Kind.AUDIO]) + (0xFFFF).to_bytes(2, "big")),
)
# "again" sends the very audio object sent last (as a quiet line is sent the one frame
# of silence), whatever the rate has become since.
_steps = st.lists(st.sampled_from(["bytes", "bytes", "bytes", "bytes", "audio", "short_audio",
                                   "again", "again", "hangup", "eof"]), max_size=40)


def _run(connection: AudioSocketConnection, chunks: list[bytes], steps: list[str]) -> list:
    """What the connection said after each step: events, errors, bytes, state, rate."""
    chunks = list(chunks)
    said = []
    last_sent = bytes(frame_bytes(connection.rate))
    # Whatever the steps left unread is read at the end.
    for step in [*steps, *["bytes"] * len(chunks)]:
        outcome = None
        try:
            if step == "bytes":
                if not chunks:
                    continue
                connection.receive_data(chunks.pop(0))
            elif step == "eof":
                connection.receive_data(b"")
            elif step == "hangup":
                connection.send(SendHangup())
            elif step == "again":
                connection.send(SendAudio(last_sent))
            else:
                size = frame_bytes(connection.rate) - (step == "short_audio")
                last_sent = bytes(size)
                connection.send(SendAudio(last_sent))
        except RemoteProtocolError as exc:
            outcome = ("remote", str(exc), exc.hint)
        except LocalProtocolError as exc:
            outcome = ("local", str(exc))
        said.append((step, outcome, connection.events_received(), connection.data_to_send(),
                     connection.state, connection.rate))
    return said


def _chunks(frames: list[bytes], groups: list[int], cuts: list[int]) -> list[bytes]:
    """Frames grouped into reads (as a socket hands them over), then cut anywhere."""
    reads, index = [], 0
    for size in groups:
        reads.append(b"".join(frames[index:index + size]))
        index += size
    reads.append(b"".join(frames[index:]))
    return [piece for read in reads for piece in split(read, cuts)]


@settings(max_examples=500)
@given(opens=st.booleans(), frames=st.lists(_frames, max_size=25),
       groups=st.lists(st.integers(1, 4), max_size=10),
       cuts=st.lists(st.integers(min_value=0), max_size=2), steps=_steps)
def test_the_fast_paths_say_what_the_tables_say(opens, frames, groups, cuts, steps):
    identifier = [frame(Kind.IDENTIFIER, uuid.UUID(int=1).bytes)] if opens else []
    chunks = _chunks(identifier + frames, groups, cuts)
    assert _run(AudioSocketConnection(), chunks, steps) == _run(TableOnly(), chunks, steps)
    assert _run(WholeFramesFirst(), chunks, steps) == _run(TableOnly(), chunks, steps)


def test_audio_laid_out_before_the_rate_changed_is_checked_again():
    connection = AudioSocketConnection()
    connection.receive_data(frame(Kind.IDENTIFIER, uuid.UUID(int=1).bytes))
    silence = bytes(frame_bytes(connection.rate))
    connection.send(SendAudio(silence))
    connection.send(SendAudio(silence))
    assert connection.data_to_send() == 2 * frame(Kind.AUDIO, silence)
    connection.receive_data(frame(Kind.AUDIO_SLIN16, bytes(640)))  # the caller's rate
    with pytest.raises(LocalProtocolError, match="640 bytes"):
        connection.send(SendAudio(silence))
