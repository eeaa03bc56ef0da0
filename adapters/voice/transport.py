"""What the call's voice session needs of an audio transport, and the engines it uses.

``CallTransport`` is the seam between the session (``session.py``) and the two wire
protocols (``audiosocket.py`` for pbx, ``carrier.py`` for the carrier's media
WebSocket). Both carry 8 kHz audio; the transports hand the session 16-bit linear
PCM whatever the wire carries (μ-law is decoded and encoded there).

The engine shapes are those of ``adapters.speech`` (synthesis, recognition, turn
detection); they are restated structurally here so that a session can be driven by
any object of that shape, fakes included.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Protocol

__all__ = [
    "FRAME_BYTES",
    "FRAME_SECONDS",
    "LINE_RATE",
    "CallEngines",
    "CallTransport",
    "Recogniser",
    "Synthesiser",
    "TransportBroken",
    "TurnDetector",
    "pull_audio",
    "relay_audio",
]

#: Both transports carry 8 kHz audio.
LINE_RATE = 8000
#: We play the line in 20 ms frames: 160 samples of 16-bit PCM.
FRAME_SECONDS = 0.020
FRAME_BYTES = 320


class TransportBroken(Exception):
    """The audio connection broke without a hangup: reset, protocol error, a fault the
    telephone system reported."""


class CallTransport(Protocol):
    """One answered call's audio connection, after its ticket was redeemed."""

    async def receive(self) -> bytes | str | None:
        """The next caller audio (16-bit PCM, 8 kHz, even length), a key the caller
        pressed (one character: ``0-9``, ``*``, ``#``, ``A-D``), or None once the peer
        hung up. Raises ``TransportBroken``."""
        ...

    async def send_frame(self, pcm: bytes) -> None:
        """Play one 20 ms frame (``FRAME_BYTES`` of 16-bit PCM, 8 kHz) to the caller."""
        ...

    async def end_of_speech(self, utterance: int) -> None:
        """Everything of ``utterance`` has been sent (the carrier marks the point)."""
        ...

    async def stop_playback(self) -> None:
        """The caller barged in: drop any audio still queued on the far side."""
        ...

    async def hang_up(self) -> None:
        """End the connection from our side."""
        ...


def _no_key(digit: str) -> None:
    pass


async def relay_audio(transport: CallTransport, on_audio: Callable[[bytes], None],
                      on_key: Callable[[str], None] = _no_key) -> None:
    """Give each piece of caller audio to ``on_audio``, and each key pressed to
    ``on_key``, in the order they came, until the peer hangs up (returns) or the
    connection breaks (raises ``TransportBroken``). A transport with a ``relay`` of its
    own does it without a task switch per frame; any other is read in a loop."""
    relay = getattr(transport, "relay", None)
    if relay is not None:
        await relay(on_audio, on_key)
        return
    await pull_audio(transport, on_audio, on_key)


async def pull_audio(transport: CallTransport, on_audio: Callable[[bytes], None],
                     on_key: Callable[[str], None] = _no_key) -> None:
    """``relay_audio`` by reading: ``receive`` until it says the peer hung up."""
    while (item := await transport.receive()) is not None:
        if type(item) is str:
            on_key(item)
        elif item:
            on_audio(item)  # type: ignore[arg-type]


class Synthesiser(Protocol):
    sample_rate: int

    def stream(self, text: str) -> AsyncIterator[bytes]: ...


class Recogniser(Protocol):
    async def transcribe(self, pcm16: bytes, sample_rate: int) -> str: ...


class TurnDetector(Protocol):
    async def end_of_turn(self, transcript: str) -> float: ...


class CallEngines(Protocol):
    """The engines of calls (``app.telephony.speech_engines.CallEngines``)."""

    synthesiser: Synthesiser
    recogniser: Recogniser
    turn_detector: TurnDetector | None
