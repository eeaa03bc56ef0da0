"""Server-sent events for the chat-completions protocol, sans-IO.

Three concerns, one private module each, re-exported here:

- ``_parser``: ``SSEParser`` turns upstream bytes into ``ServerSentEvent`` values.
- ``_openai``: reading an OpenAI-compatible upstream — ``decode_chat_event`` (chunk dict
  or ``DONE``), ``StreamTally`` (finish reason, usage, in-stream error for accounting),
  asking a stream for its usage on a client's behalf, error bodies and the models list.
- ``_encoder``: writing our own ``/v1`` answers — ``ChunkEncoder`` (the streamed frames
  as a small state machine) and ``assemble_completion`` (the non-streamed object).

Peers' mistakes raise ``core.errors.RemoteProtocolError``; ours (a frame out of order)
raise ``core.errors.LocalProtocolError``.
"""

# Each module's public names are listed once, in its ``__all__``, and offered here.
from core.sse import _encoder, _openai, _parser
from core.sse._encoder import *  # noqa: F403
from core.sse._openai import *  # noqa: F403
from core.sse._parser import *  # noqa: F403

__all__ = [
    *_encoder.__all__,
    *_openai.__all__,
    *_parser.__all__,
]
