"""The readiness check and a call's engines, set up as docs/telephony.md tells an
operator to point svc at Kokoro-FastAPI and speaches, against their loopback stand-ins.

The engines live on this machine (127.0.0.1) and ``egress.allow_hosts`` stays empty:
speech engines are the operator's own servers and do not pass the egress gate."""

from __future__ import annotations

from urllib.parse import urlsplit

import anyio
import pytest

from app.telephony.speech_engines import engines_for_calls
from tests.app.telephony.deployment import deployment
from tests.app.telephony.test_telephony_readiness import checks
from tests.fakes.speech import spoken_pcm
from tests.fakes.speech_servers import FakeKokoro, FakeSpeaches, kokoro, speaches  # noqa: F401

pytestmark = pytest.mark.anyio

GUARD = 10


async def self_hosted(api, services, kokoro: FakeKokoro, speaches: FakeSpeaches, **changes):
    setup = await deployment(api, services)
    settings = {"voice_live.tts_stream": True, "voice_live.tts_stream_url": kokoro.base_url,
                "voice_live.tts_model": "kokoro", "voice_live.tts_voice": "af_heart",
                "voice_live.stt_url": speaches.base_url,
                "voice_live.stt_model": "Systran/faster-whisper-small",
                "voice_live.stt_sample_rate": 16000, **changes}
    for key, value in settings.items():
        await setup.setting(key, value)
    return setup


async def test_kokoro_and_speaches_pass_the_speech_checks(api, services, kokoro, speaches):
    assert (await services.settings.snapshot())["egress.allow_hosts"] in ("", None)
    setup = await self_hosted(api, services, kokoro, speaches)
    found = checks(await api.get("/api/admin/telephony/check", headers=setup.manager))
    assert found["synthesiser"]["status"] == "pass", found["synthesiser"]
    where = urlsplit(speaches.base_url).netloc
    assert found["recognition_rate"] == {
        "id": "recognition_rate", "status": "pass",
        "message": f"Recognition runs at 16000 Hz, by the engine at {where} (set, not "
                   "tried: trying it takes a caller's speech)."}
    asked = kokoro.requests[-1]
    assert (asked.fields["model"], asked.fields["voice"]) == ("kokoro", "af_heart")
    assert asked.fields["response_format"] == "pcm"

    engines = await engines_for_calls(services.settings, services.box)
    with anyio.fail_after(GUARD):
        assert b"".join([c async for c in engines.synthesiser.stream("Hello.")]) == (
            spoken_pcm("Hello."))
        assert await engines.recogniser.transcribe(bytes(640), 16000) == (
            "Hello, I would like to book a table.")
    assert speaches.requests[-1].fields["model"] == "Systran/faster-whisper-small"


async def test_a_voice_kokoro_does_not_have_fails_in_kokoros_words(api, services, kokoro,
                                                                  speaches):
    setup = await self_hosted(api, services, kokoro, speaches,
                              **{"voice_live.tts_voice": "af_nobody"})
    found = checks(await api.get("/api/admin/telephony/check", headers=setup.manager))
    message = found["synthesiser"]["message"]
    assert found["synthesiser"]["status"] == "fail"
    assert message.startswith(f"The speech engine at 127.0.0.1:{kokoro.port} answered HTTP "
                              "400: Voice 'af_nobody' not found."), message
    assert message.endswith("Check voice_live.tts_model and voice_live.tts_voice.")
