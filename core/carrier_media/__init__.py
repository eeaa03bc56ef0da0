"""Twilio Media Streams, the carrier transport's audio connection, as a sans-IO machine.

``CarrierConnection`` is fed the WebSocket's text messages and returns events; audio,
marks and clears go in through ``send`` and leave as text messages through
``data_to_send``. The adapter owns the WebSocket, the clock and the ticket store.
``CarrierStreamClient`` is the carrier's side of the same stream, for simulating calls.
"""

# Each module's public names are listed once, in its ``__all__``; the package offers
# them all, and of the codec only its limit and close codes.
from . import _client, _connection, _events
from ._client import *  # noqa: F403
from ._codec import MAX_MESSAGE_BYTES, CloseCode
from ._connection import *  # noqa: F403
from ._events import *  # noqa: F403

__all__ = [
    *_client.__all__,
    *_connection.__all__,
    *_events.__all__,
    "MAX_MESSAGE_BYTES",
    "CloseCode",
]
