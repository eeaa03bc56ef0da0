"""What the call's voice session needs of an audio transport, and the engines it uses.

``CallTransport`` is the seam between the session (``session.py``) and the two wire
protocols (``audiosocket.py`` for pbx, ``carrier.py`` for the carrier's media
WebSocket). Both carry 8 kHz audio; the transports hand the session 16-bit linear
PCM whatever the wire carries (μ-law is decoded and encoded there).

Besides the five calls every transport answers, it declares its fast paths, each with
a plain default a transport without one keeps: ``relay`` (caller audio handed on
without a task switch per frame; by default read with ``receive`` in a loop),
``frame_writer`` (frames written from the shared ticker without waiting; by default
none, and the player awaits ``send_frame``), ``lead_frames`` (frames the far side
buffers ahead; none) and ``keeps_line_busy`` (the far side hangs up on a quiet line;
it does not). A session asks for them by name, never by probing.

The engine shapes are the protocols of ``adapters.speech.base`` (synthesis,
recognition, turn detection), declared there once and named here for the session;
being protocols, any object of that shape drives a session, fakes included.
``CallEngines`` holds the three a call talks through.
"""

from __future__ import annotations

__all__ = [
    "FRAME_BYTES",
    "FRAME_SECONDS",
    "LINE_RATE",
    "CallEngines",
    "CallTransport",
    "FrameWriter",
    "Recogniser",
    "Synthesiser",
    "TransportBroken",
    "TurnDetector",
    "hand_on",
    "ignore_key",
    "pull_audio",
]

from abc import ABC, abstractmethod
from collections.abc import Callable

from adapters.speech.base import Recogniser, Synthesiser, TurnDetector
from core.records import frozen

#: Both transports carry 8 kHz audio.
LINE_RATE = 8000
#: We play the line in 20 ms frames: 160 samples of 16-bit PCM.
FRAME_SECONDS = 0.020
FRAME_BYTES = 320


class TransportBroken(Exception):
    """The audio connection broke without a hangup: reset, protocol error, a fault the
    telephone system reported."""


#: Writes one frame without waiting; False, with nothing written, while the peer is
#: not keeping up. Raises ``TransportBroken``.
FrameWriter = Callable[[bytes], bool]


def ignore_key(digit: str) -> None:
    """What a relay does with keys when it is not told."""


class CallTransport(ABC):
    """One answered call's audio connection, after its ticket was redeemed."""

    #: Frames the player may send ahead of the call's time: the far side buffers them
    #: and plays them at the call's rate.
    lead_frames: int = 0
    #: The far side hangs up on a line without frames: the player fills quiet with
    #: silence.
    keeps_line_busy: bool = False

    @abstractmethod
    async def receive(self) -> bytes | str | None:
        """The next caller audio (16-bit PCM, 8 kHz, even length), a key the caller
        pressed (one character: ``0-9``, ``*``, ``#``, ``A-D``), or None once the peer
        hung up. Raises ``TransportBroken``."""

    @abstractmethod
    async def send_frame(self, pcm: bytes) -> None:
        """Play one 20 ms frame (``FRAME_BYTES`` of 16-bit PCM, 8 kHz) to the caller."""

    @abstractmethod
    async def end_of_speech(self, utterance: int) -> None:
        """Everything of ``utterance`` has been sent (the carrier marks the point)."""

    @abstractmethod
    async def stop_playback(self) -> None:
        """The caller barged in: drop any audio still queued on the far side."""

    @abstractmethod
    async def hang_up(self) -> None:
        """End the connection from our side."""

    async def relay(self, on_audio: Callable[[bytes], None],
                    on_key: Callable[[str], None] = ignore_key) -> None:
        """Give each piece of caller audio to ``on_audio``, and each key pressed to
        ``on_key``, in the order they came, until the peer hangs up (returns) or the
        connection breaks (raises ``TransportBroken``). Here by reading ``receive`` in a
        loop; a transport that can do it without a task switch per frame does."""
        await pull_audio(self, on_audio, on_key)

    def frame_writer(self) -> FrameWriter | None:
        """``send_frame`` without waiting, for the player to call from the shared
        ticker; asked once, as the player starts. None here: this transport only
        sends by awaiting, and the player's task does it."""
        return None


def hand_on(item: bytes | str, on_audio: Callable[[bytes], None],
            on_key: Callable[[str], None]) -> None:
    """One piece of caller audio to ``on_audio``, or one key to ``on_key``."""
    if type(item) is str:
        on_key(item)
    elif item:
        on_audio(item)  # type: ignore[arg-type]


async def pull_audio(transport: CallTransport, on_audio: Callable[[bytes], None],
                     on_key: Callable[[str], None] = ignore_key) -> None:
    """``CallTransport.relay`` by reading: ``receive`` until it says the peer hung up."""
    while (item := await transport.receive()) is not None:
        hand_on(item, on_audio, on_key)


@frozen
class CallEngines:
    """The engines of one call (chosen by ``app.telephony.speech_engines``).
    ``turn_detector`` is None when no turn-detection service is configured
    (``voice.turn_detection_url`` empty)."""

    synthesiser: Synthesiser
    recogniser: Recogniser
    turn_detector: TurnDetector | None = None
