"""Twilio Media Streams, the carrier transport's audio connection, as a sans-IO machine.

``CarrierConnection`` is fed the WebSocket's text messages and returns events; audio,
marks and clears go in through ``send`` and leave as text messages through
``data_to_send``. The adapter owns the WebSocket, the clock and the ticket store.
``CarrierStreamClient`` is the carrier's side of the same stream, for simulating calls.
"""

from ._client import (
    ULAW_FRAME_BYTES,
    AudioArrived,
    CarrierStreamClient,
    ClearArrived,
    ClientStreamState,
    MarkArrived,
)
from ._codec import MAX_MESSAGE_BYTES, CloseCode
from ._connection import CarrierConnection, StreamState
from ._events import (
    ClearAudio,
    DtmfReceived,
    Event,
    MarkReceived,
    MediaReceived,
    MessageIgnored,
    SendMark,
    SendMedia,
    StreamConnected,
    StreamStarted,
    StreamStopped,
)

__all__ = [
    "MAX_MESSAGE_BYTES",
    "ULAW_FRAME_BYTES",
    "AudioArrived",
    "CarrierConnection",
    "CarrierStreamClient",
    "ClearArrived",
    "ClearAudio",
    "ClientStreamState",
    "CloseCode",
    "DtmfReceived",
    "Event",
    "MarkArrived",
    "MarkReceived",
    "MediaReceived",
    "MessageIgnored",
    "SendMark",
    "SendMedia",
    "StreamConnected",
    "StreamStarted",
    "StreamState",
    "StreamStopped",
]
