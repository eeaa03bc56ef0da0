"""Semantic turn detection over HTTP: partial transcript in, end-of-turn probability out.

What belongs here: ``HttpTurnDetector``, the client of the turn-detection service named
by ``voice.turn_detection_url`` (spec: DESIGN.md "turn detection"). No standard exists,
so the protocol is ours and small (docs/decisions.md "Speech engines"):

    POST {voice.turn_detection_url}
    Content-Type: application/json
    {"transcript": "I'd like to book a table for"}

    200 OK
    Content-Type: application/json
    {"probability": 0.12}

``probability`` is a number from 0 to 1 that the speaker has finished their turn. Any
other answer — another status, a body that is not that object, a number out of range —
and any time-out raise ``SpeechUnavailable``; the voice pipeline then stops asking for
the rest of the call.

The URL is the administrator's, but typed into a setting: it passes the egress gate
like every other connector, with the allow list ``egress.allow_hosts`` (a detector on
this machine or the local network is put there).
"""

from __future__ import annotations

__all__ = ["TURN_TIMEOUTS", "HttpTurnDetector"]

import json
from dataclasses import KW_ONLY, dataclass

from adapters.speech.base import SpeechTimeouts, SpeechUnavailable
from adapters.speech.http import Endpoint, SpeechHttp, gated_request, map_exceptions

#: A turn waits on this answer, so it must be quick; the pipeline's own ceiling (four
#: times the pause) bounds the wait in any case.
TURN_TIMEOUTS = SpeechTimeouts(connect=1.0, read=2.0)
_MAX_ANSWER_BYTES = 4096


@dataclass(eq=False)
class HttpTurnDetector:
    """Asks the turn-detection service whether the caller has finished.

    ``http``: the process's pool of speech connections (None: one connection a request).
    """

    endpoint: Endpoint
    _: KW_ONLY
    #: hosts the egress gate lets through although their addresses are not public
    allow_hosts: tuple[str, ...] = ()
    timeouts: SpeechTimeouts = TURN_TIMEOUTS
    http: SpeechHttp | None = None

    async def end_of_turn(self, transcript: str) -> float:
        """Probability 0..1 that ``transcript`` is a finished turn."""
        label = self.endpoint.label
        async with gated_request(self.http, self.endpoint, "", self.timeouts,
                                 self.allow_hosts,
                                 json={"transcript": transcript}) as response:
            with map_exceptions(label):
                body = await response.content.read(_MAX_ANSWER_BYTES + 1)
        try:
            probability = json.loads(body)["probability"]
        except (ValueError, KeyError, TypeError):
            raise SpeechUnavailable('answered something that is not {"probability": ...}',
                                    engine=label) from None
        if (isinstance(probability, bool) or not isinstance(probability, (int, float))
                or not 0 <= probability <= 1):  # NaN fails the range too
            raise SpeechUnavailable(f"answered probability {probability!r}, not a number "
                                    "from 0 to 1", engine=label)
        return float(probability)
