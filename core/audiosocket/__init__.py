"""Asterisk AudioSocket, the pbx transport's audio connection, as a sans-IO machine.

``AudioSocketConnection`` is fed the bytes the telephone system sends and returns
events; outbound audio and hangup go in through ``send`` and leave as bytes through
``data_to_send``. The adapter owns the socket, the clock and the ticket store.
``AudioSocketClient`` is the telephone system's side, for simulating calls.
"""

# Each module's public names are listed once, in its ``__all__``; the package offers
# them all, and of the wire format what a caller of the machine needs.
from . import _client, _connection, _events
from ._client import *  # noqa: F403
from ._connection import *  # noqa: F403
from ._events import *  # noqa: F403
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
    *_client.__all__,
    *_connection.__all__,
    *_events.__all__,
    "AUDIO_FRAME_BYTES",
    "AUDIO_KIND_RATES",
    "MAX_PAYLOAD_BYTES",
    "ErrorCode",
    "Kind",
    "audio_kind",
    "frame_bytes",
]
