"""Which speech engines a call uses, chosen from the ``voice_live.*`` settings.

What belongs here: ``engines_for_calls``, which reads the settings and the sealed keys
and builds the engines one call talks through (``CallEngines``, declared with the
session in ``adapters.voice.transport``), and ``synthesiser_for``, which the readiness check
uses too, so that the check and the calls speak through the same code. The engines
themselves are in ``adapters.speech``; tests may build ``CallEngines(...)`` directly.

The URL ``local`` selects the built-in engine (eSpeak NG, PocketSphinx). An engine
that is not configured is still an engine: it raises ``SpeechUnavailable`` when used,
so a call without a synthesiser ends ``notice_failed`` and one without a recogniser
hears nothing (spec: telephony.md "Errors", "notice then silence").
"""

from __future__ import annotations

__all__ = ["LOCAL", "CallEngines", "engines_for_calls", "synthesiser_for"]

from collections.abc import AsyncIterator

from adapters.speech import Recogniser, SpeechUnavailable, Synthesiser, TurnDetector
from adapters.speech.espeak import LocalSynthesiser
from adapters.speech.http import Endpoint, SpeechHttp
from adapters.speech.openai import OpenAIRecogniser, OpenAISynthesiser
from adapters.speech.sphinx import LocalRecogniser
from adapters.speech.turns import HttpTurnDetector
from adapters.voice.transport import CallEngines
from app.crypto import SecretBox
from app.services.settings import Settings, Snapshot
from core.egress import parse_allow_hosts
from core.refusals import streaming_synthesiser_configured

#: The URL value that selects the built-in engine.
LOCAL = "local"


class UnconfiguredSynthesiser:
    """Stands in when no synthesiser is configured; every use says what to set."""

    sample_rate = 24000

    async def stream(self, text: str) -> AsyncIterator[bytes]:
        raise SpeechUnavailable("no streaming synthesiser is configured: set "
                                "voice_live.tts_stream and voice_live.tts_stream_url")
        yield b""  # an async generator, like every synthesiser


class UnconfiguredRecogniser:
    """Stands in when no recogniser is configured; every use says what to set."""

    async def transcribe(self, pcm16: bytes, sample_rate: int) -> str:
        raise SpeechUnavailable("no recogniser is configured: set voice_live.stt_url to an "
                                "OpenAI-compatible /v1 base or 'local'")


def synthesiser_for(snapshot: Snapshot, key: str | None,
                    http: SpeechHttp | None = None) -> Synthesiser:
    """The synthesiser the settings name; ``key``: the opened ``tts_api_key_enc``."""
    url = (snapshot["voice_live.tts_stream_url"] or "").strip()
    if not streaming_synthesiser_configured(snapshot["voice_live.tts_stream"], url):
        return UnconfiguredSynthesiser()
    if url == LOCAL:
        return LocalSynthesiser(snapshot["voice_live.tts_voice"])
    return OpenAISynthesiser(Endpoint(url, key), model=snapshot["voice_live.tts_model"],
                             voice=snapshot["voice_live.tts_voice"], http=http)


def recogniser_for(snapshot: Snapshot, key: str | None,
                   http: SpeechHttp | None = None) -> Recogniser:
    """The recogniser the settings name; ``key``: the opened ``stt_api_key_enc``."""
    url = (snapshot["voice_live.stt_url"] or "").strip()
    if not url:
        return UnconfiguredRecogniser()
    if url == LOCAL:
        return LocalRecogniser()
    return OpenAIRecogniser(Endpoint(url, key), model=snapshot["voice_live.stt_model"],
                            http=http)


def turn_detector_for(snapshot: Snapshot, http: SpeechHttp | None = None) -> TurnDetector | None:
    url = (snapshot["voice.turn_detection_url"] or "").strip()
    if not url:
        return None
    allow_hosts = parse_allow_hosts(snapshot["egress.allow_hosts"])
    return HttpTurnDetector(Endpoint(url), allow_hosts=allow_hosts, http=http)


async def engines_for_calls(settings: Settings, box: SecretBox, *,
                            http: SpeechHttp | None = None) -> CallEngines:
    """The engines for a call starting now, from the settings in force.

    ``http``: the process's pool of speech connections (``Services.speech_http``);
    without it each request opens a connection of its own. ``box`` opens the keys
    (``settings.secret`` uses the same box).
    """
    snapshot = await settings.snapshot()
    tts_key = box.open(snapshot["voice_live.tts_api_key_enc"], "voice_live.tts_api_key_enc")
    stt_key = box.open(snapshot["voice_live.stt_api_key_enc"], "voice_live.stt_api_key_enc")
    return CallEngines(
        synthesiser=synthesiser_for(snapshot, tts_key, http),
        recogniser=recogniser_for(snapshot, stt_key, http),
        turn_detector=turn_detector_for(snapshot, http),
    )
