"""Calling OpenAI-compatible upstream model servers.

``ProviderClient`` (``client.py``) is the one way the service talks to an upstream:
``list_models``, ``complete``, ``stream`` (chunk dicts) and ``relay`` (the upstream's
bytes unchanged, for passthrough). Every failure is an ``UpstreamError`` (``errors.py``)
whose ``status_code`` says what ``/v1`` should answer.
"""

from adapters.providers.client import ProviderClient, Timeouts, Upstream
from adapters.providers.errors import (
    UpstreamDisconnected,
    UpstreamError,
    UpstreamProtocolError,
    UpstreamStatusError,
    UpstreamTimeout,
    UpstreamUnavailable,
    map_exceptions,
)
from adapters.providers.streams import ChunkStream, RawRelay

__all__ = [
    "ChunkStream",
    "ProviderClient",
    "RawRelay",
    "Timeouts",
    "Upstream",
    "UpstreamDisconnected",
    "UpstreamError",
    "UpstreamProtocolError",
    "UpstreamStatusError",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "map_exceptions",
]
