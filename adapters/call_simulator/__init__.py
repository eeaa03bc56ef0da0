"""A call simulator: ring a line on a running server as its telephone network would.

For operators (``svc call simulate``) and tests. Over either transport — as a
Twilio-compatible carrier (``ring_carrier``) or as Asterisk with AudioSocket
(``ring_pbx``) — the simulated caller follows a script (``script``): it speaks text
or plays audio, listens, presses keys, goes silent or hangs up, always at the pace of
a real call. The ``CallReport`` holds what the caller heard (a recording), the
stretches of the line's speech with their transcripts, and the time from the end of
each of the caller's turns to the first reply audio.

Only the real wire protocols are used: the signalling endpoints over HTTP, the media
WebSocket or the AudioSocket listener, with the wire formats of ``core``.
"""

# The script's names are listed once, in its ``__all__``; the package offers them all,
# and of the other modules what an operator or a test rings a line with.
from adapters.call_simulator import script
from adapters.call_simulator.audio import (
    AudioFileError,
    at_telephone_level,
    read_wav,
    write_wav,
)
from adapters.call_simulator.carrier import ring_carrier
from adapters.call_simulator.pbx import ring_pbx
from adapters.call_simulator.script import *  # noqa: F403
from adapters.call_simulator.session import CallReport, Reply, Timing, transcribe

__all__ = [
    *script.__all__,
    "AudioFileError",
    "CallReport",
    "Reply",
    "Timing",
    "read_wav",
    "ring_carrier",
    "ring_pbx",
    "at_telephone_level",
    "transcribe",
    "write_wav",
]
