"""Calling OpenAI-compatible upstream model servers.

``ProviderClient`` (``client.py``) is the one way the service talks to an upstream:
``list_models``, ``complete``, ``stream`` (chunk dicts) and ``relay`` (the upstream's
bytes unchanged, for passthrough). Every failure is an ``UpstreamError`` (``errors.py``)
whose ``status_code`` says what ``/v1`` should answer.
"""

# Each module's public names are listed once, in its ``__all__``, and offered here.
from adapters.providers import client, errors, streams
from adapters.providers.client import *  # noqa: F403
from adapters.providers.errors import *  # noqa: F403
from adapters.providers.streams import *  # noqa: F403

__all__ = [
    *client.__all__,
    *errors.__all__,
    *streams.__all__,
]
