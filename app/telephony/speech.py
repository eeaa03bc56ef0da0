"""The synthesiser check: does the configured speech engine answer a short phrase?

spec: telephony.md "Readiness check" — ``synthesiser`` "is a real request: it sends a
short test phrase to the configured engine and reports the outcome".

* ``voice_live.tts_stream_url`` an OpenAI-compatible ``/v1`` base: ``POST
  {base}/audio/speech`` with ``voice_live.tts_model``, ``voice_live.tts_voice``,
  ``response_format: pcm`` and the key ``voice_live.tts_api_key_enc``; it passes when
  audio bytes come back within a few seconds.
* ``local``: the built-in engine (eSpeak NG, from the ``espeakng-loader`` package)
  passes when it can be loaded.
"""

from __future__ import annotations

import importlib.util
from urllib.parse import urlsplit

import aiohttp

from app.services.settings import Snapshot
from core.refusals import streaming_synthesiser_configured

TEST_PHRASE = "This is a test of the telephone line."
TIMEOUT_SECONDS = 5.0
LOCAL_ENGINE_MODULE = "espeakng_loader"


def _local_engine() -> tuple[bool, str]:
    if importlib.util.find_spec(LOCAL_ENGINE_MODULE) is not None:
        return True, "The local speech engine (eSpeak NG) is installed."
    return False, ("voice_live.tts_stream_url is local but the local speech engine is not "
                   "installed. Install it with: pip install espeakng-loader")


async def _remote_engine(base: str, model: str, voice: str,
                         key: str | None) -> tuple[bool, str]:
    url = base.rstrip("/") + "/audio/speech"
    host = urlsplit(url).netloc or url
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = {"model": model, "voice": voice, "input": TEST_PHRASE, "response_format": "pcm"}
    timeout = aiohttp.ClientTimeout(total=TIMEOUT_SECONDS)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.post(url, json=body, headers=headers) as response:
                audio = await response.content.read(4096)
                status = response.status
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        return False, (f"The speech engine at {host} did not answer ({type(exc).__name__}). "
                       "Check voice_live.tts_stream_url and that the engine is running.")
    if status in (401, 403):
        return False, (f"The speech engine at {host} refused the key (HTTP {status}). "
                       "Store a valid voice_live.tts_api_key_enc.")
    if status != 200:
        return False, (f"The speech engine at {host} answered HTTP {status}. Check "
                       "voice_live.tts_model and voice_live.tts_voice.")
    if not audio:
        return False, f"The speech engine at {host} answered without audio."
    return True, f"The speech engine at {host} spoke the test phrase."


async def probe_synthesiser(snapshot: Snapshot, key: str | None) -> tuple[bool, str]:
    """``(passed, sentence)`` for the engine the settings name."""
    url = (snapshot["voice_live.tts_stream_url"] or "").strip()
    if not streaming_synthesiser_configured(snapshot["voice_live.tts_stream"], url):
        return False, ("No streaming synthesiser is configured, so a line picks up and "
                       "cannot speak. Set voice_live.tts_stream to true and "
                       "voice_live.tts_stream_url to an engine or 'local'.")
    if url == "local":
        return _local_engine()
    return await _remote_engine(url, snapshot["voice_live.tts_model"],
                                snapshot["voice_live.tts_voice"], key)
