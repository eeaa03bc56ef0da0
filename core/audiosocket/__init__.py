"""Asterisk AudioSocket, the pbx transport's audio connection, as a sans-IO machine.

``AudioSocketConnection`` is fed the bytes the telephone system sends and returns
events; outbound audio and hangup go in through ``send`` and leave as bytes through
``data_to_send``. The adapter owns the socket, the clock and the ticket store.
``AudioSocketClient`` is the telephone system's side, for simulating calls.
"""

from ._client import AudioSocketClient, ClientState
from ._connection import AudioSocketConnection, ConnectionState, Reaction
from ._events import (
    AudioReceived,
    DtmfReceived,
    ErrorReceived,
    Event,
    HangupReceived,
    IdentifierReceived,
    SendAudio,
    SendHangup,
)
from ._wire import (
    AUDIO_FRAME_BYTES,
    AUDIO_KIND_RATES,
    MAX_PAYLOAD_BYTES,
    ErrorCode,
    Kind,
    audio_kind,
    frame_bytes,
)

__all__ = [
    "AUDIO_FRAME_BYTES",
    "AUDIO_KIND_RATES",
    "MAX_PAYLOAD_BYTES",
    "AudioReceived",
    "AudioSocketClient",
    "AudioSocketConnection",
    "ClientState",
    "ConnectionState",
    "DtmfReceived",
    "ErrorCode",
    "ErrorReceived",
    "Event",
    "HangupReceived",
    "IdentifierReceived",
    "Kind",
    "Reaction",
    "SendAudio",
    "SendHangup",
    "audio_kind",
    "frame_bytes",
]
