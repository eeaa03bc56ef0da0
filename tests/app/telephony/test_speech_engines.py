"""The engines of a call come from the voice_live.* settings, keys opened from their
sealed form, ``local`` selecting the built-in engines; unset engines say what to set."""

from __future__ import annotations

from contextlib import aclosing

import anyio
import pytest

from adapters.speech import SpeechUnavailable
from adapters.speech.espeak import LocalSynthesiser
from adapters.speech.openai import OpenAIRecogniser, OpenAISynthesiser
from adapters.speech.sphinx import LocalRecogniser
from adapters.speech.turns import HttpTurnDetector
from app.crypto import SecretBox
from app.telephony.readiness import probe_synthesiser
from app.telephony.speech_engines import CallEngines, engines_for_calls
from tests.fakes.speech import SpeechBehaviour, speech, speech_http, spoken_pcm  # noqa: F401
from tests.support.settings import set_runtime

pytestmark = pytest.mark.anyio

GUARD = 10


async def configure(services, **values):
    for key, value in values.items():
        await set_runtime(services, key.replace("__", "."), value)


async def remote(services, speech):
    await configure(services, voice_live__tts_stream=True,
                    voice_live__tts_stream_url=speech.base_url,
                    voice_live__tts_model="tts-hd", voice_live__tts_voice="nova",
                    voice_live__tts_api_key_enc="sk-speak",
                    voice_live__stt_url=speech.base_url, voice_live__stt_model="whisper-large",
                    voice_live__stt_api_key_enc="sk-hear",
                    voice__turn_detection_url=speech.turn_url,
                    egress__allow_hosts="127.0.0.1")


async def say(synthesiser, text: str) -> bytes:
    with anyio.fail_after(GUARD):
        async with aclosing(synthesiser.stream(text)) as chunks:
            return b"".join([chunk async for chunk in chunks])


async def test_a_fresh_install_has_engines_that_say_what_to_configure(services):
    engines = await engines_for_calls(services.settings, services.box)
    assert isinstance(engines, CallEngines) and engines.turn_detector is None
    with pytest.raises(SpeechUnavailable, match="voice_live.tts_stream_url"):
        await say(engines.synthesiser, "Hello")
    with pytest.raises(SpeechUnavailable, match="voice_live.stt_url"):
        await engines.recogniser.transcribe(bytes(320), 8000)


async def test_a_url_without_tts_stream_on_is_not_a_synthesiser(services, speech):
    await configure(services, voice_live__tts_stream_url=speech.base_url)
    engines = await engines_for_calls(services.settings, services.box)
    with pytest.raises(SpeechUnavailable, match="voice_live.tts_stream"):
        await say(engines.synthesiser, "Hello")
    assert speech.requests == []


async def test_remote_engines_use_the_settings_and_the_opened_keys(services, speech, speech_http):
    await remote(services, speech)
    speech.behaviour = SpeechBehaviour(text="book me in please", probability=0.75)
    engines = await engines_for_calls(services.settings, services.box, http=speech_http)
    assert isinstance(engines.synthesiser, OpenAISynthesiser)
    assert isinstance(engines.recogniser, OpenAIRecogniser)
    assert isinstance(engines.turn_detector, HttpTurnDetector)

    assert await say(engines.synthesiser, "Good day") == spoken_pcm("Good day")
    spoken = speech.requests[-1]
    assert (spoken.fields["model"], spoken.fields["voice"]) == ("tts-hd", "nova")
    assert spoken.headers["authorization"] == "Bearer sk-speak"

    with anyio.fail_after(GUARD):
        assert await engines.recogniser.transcribe(bytes(640), 16000) == "book me in please"
    heard = speech.requests[-1]
    assert heard.fields["model"] == "whisper-large"
    assert heard.headers["authorization"] == "Bearer sk-hear"

    with anyio.fail_after(GUARD):
        assert await engines.turn_detector.end_of_turn("book me in") == 0.75


async def test_a_key_that_cannot_be_opened_is_sent_as_no_key(services, speech):
    await remote(services, speech)
    other_box = SecretBox("11" * 32)  # not the deployment's key: nothing opens
    engines = await engines_for_calls(services.settings, other_box)
    await say(engines.synthesiser, "Hi")
    assert "authorization" not in speech.requests[-1].headers


async def test_local_selects_the_built_in_engines_with_the_configured_voice(services):
    await configure(services, voice_live__tts_stream=True, voice_live__tts_stream_url="local",
                    voice_live__tts_voice="en-us", voice_live__stt_url="local")
    engines = await engines_for_calls(services.settings, services.box)
    assert isinstance(engines.synthesiser, LocalSynthesiser)
    assert engines.synthesiser.voice == "en-us"
    assert isinstance(engines.recogniser, LocalRecogniser)
    assert engines.synthesiser.sample_rate == 16000
    assert len(await say(engines.synthesiser, "Hello.")) > 16000  # half a second at least


async def test_settings_changes_reach_the_next_call(services, speech):
    await remote(services, speech)
    first = await engines_for_calls(services.settings, services.box)
    await configure(services, voice__turn_detection_url="")
    second = await engines_for_calls(services.settings, services.box)
    assert first.turn_detector is not None and second.turn_detector is None


# -- the readiness check speaks through the same engines ------------------------------


async def probe(services, key="sk-speak"):
    with anyio.fail_after(GUARD):
        return await probe_synthesiser(await services.settings.snapshot(), key)


async def test_readiness_passes_when_the_engine_speaks_the_test_phrase(services, speech):
    await remote(services, speech)
    ok, sentence = await probe(services)
    assert ok, sentence
    assert speech.requests[-1].fields["input"] == "This is a test of the telephone line."
    assert speech.requests[-1].fields["voice"] == "nova"


@pytest.mark.parametrize("behaviour, words", [
    (SpeechBehaviour(status=500), "answered HTTP 500"),
    (SpeechBehaviour(status=403), "refused the key"),
    (SpeechBehaviour(garbage=b'{"ok": true}'), "not audio"),
    (SpeechBehaviour(first_byte_delay=30), "did not answer"),
    # 200 with nothing to hear: a call would end notice_failed on it.
    (SpeechBehaviour(garbage=b"", garbage_content_type="audio/pcm"), "without audio"),
    (SpeechBehaviour(garbage=bytes(32001), garbage_content_type="audio/pcm"), "silence only"),
])
async def test_readiness_fails_as_a_call_would(services, speech, behaviour, words):
    await remote(services, speech)
    speech.behaviour = behaviour
    ok, sentence = await probe(services)
    assert not ok and words in sentence, sentence
    assert f"127.0.0.1:{speech.port}" in sentence


async def test_readiness_of_the_local_engine_really_speaks(services):
    await configure(services, voice_live__tts_stream=True, voice_live__tts_stream_url="local")
    ok, sentence = await probe(services, None)
    assert ok and sentence == "The local speech engine (eSpeak NG) spoke the test phrase."
