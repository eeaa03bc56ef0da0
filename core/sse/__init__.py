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

from core.sse._encoder import ChunkEncoder, EncoderState, assemble_completion
from core.sse._openai import (
    DONE,
    StreamTally,
    asking_usage,
    decode_chat_event,
    decode_json_object,
    is_usage_chunk,
    model_ids,
    upstream_error_message,
    usage_asked,
)
from core.sse._parser import MAX_EVENT_BYTES, SSEParser, ServerSentEvent

__all__ = [
    "DONE",
    "MAX_EVENT_BYTES",
    "ChunkEncoder",
    "EncoderState",
    "SSEParser",
    "ServerSentEvent",
    "StreamTally",
    "asking_usage",
    "assemble_completion",
    "decode_chat_event",
    "decode_json_object",
    "is_usage_chunk",
    "model_ids",
    "upstream_error_message",
    "usage_asked",
]
