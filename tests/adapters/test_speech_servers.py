"""svc's synthesiser and recogniser against the wire formats of the servers operators
run: OpenAI, speaches (faster-whisper) and Kokoro-FastAPI (``tests/fakes/speech_servers.py``)."""

from __future__ import annotations

import struct

import anyio
import pytest

from adapters.speech import SpeechTimeouts, SpeechUnavailable
from adapters.speech.http import Endpoint, request
from adapters.speech.openai import OpenAIRecogniser, OpenAISynthesiser
from tests.fakes.speech import speech_http, spoken_pcm  # noqa: F401
from tests.fakes.speech_servers import (  # noqa: F401
    OPENAI_KEY, FakeKokoro, FakeOpenAI, FakeSpeaches, kokoro, openai, speaches)

pytestmark = pytest.mark.anyio

GUARD = 10  # a broken test fails instead of hanging; never a timing assertion
TURN = struct.pack("<6h", 0, 120, -120, 3000, -32768, 32767)


async def speak(synthesiser: OpenAISynthesiser, text: str) -> list[bytes]:
    with anyio.fail_after(GUARD):
        return [chunk async for chunk in synthesiser.stream(text)]


async def hear(recogniser: OpenAIRecogniser, pcm: bytes = TURN, rate: int = 16000) -> str:
    with anyio.fail_after(GUARD):
        return await recogniser.transcribe(pcm, rate)


def refusal(caught: pytest.ExceptionInfo[SpeechUnavailable]) -> str:
    """The sentence after the host: what an operator reads."""
    return caught.value.message


# -- OpenAI ----------------------------------------------------------------------------


def openai_voice(fake: FakeOpenAI, key: str | None = OPENAI_KEY, voice: str = "alloy",
                 http=None) -> OpenAISynthesiser:
    return OpenAISynthesiser(Endpoint(fake.base_url, key), model="tts-1", voice=voice,
                             http=http)


def openai_ears(fake: FakeOpenAI, key: str | None = OPENAI_KEY,
                model: str = "whisper-1") -> OpenAIRecogniser:
    return OpenAIRecogniser(Endpoint(fake.base_url, key), model=model, language="en")


@pytest.mark.parametrize("chunk_bytes", [1, 3, 2401, 48001])
async def test_openai_speech_streams_24khz_pcm_arriving_in_odd_pieces(openai, speech_http,
                                                                      chunk_bytes):
    openai.chunk_bytes = chunk_bytes
    chunks = await speak(openai_voice(openai, http=speech_http), "Your table is booked.")
    assert all(chunk and len(chunk) % 2 == 0 for chunk in chunks)
    assert b"".join(chunks) == spoken_pcm("Your table is booked.")
    asked = openai.requests[-1]
    assert asked.path == "/v1/audio/speech"
    assert asked.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    # only the fields OpenAI knows: it refuses unknown ones, so no "stream" is sent
    assert asked.fields == {"model": "tts-1", "voice": "alloy",
                            "input": "Your table is booked.", "response_format": "pcm"}


@pytest.mark.parametrize("key, words", [
    ("sk-proj-wrong-one", "Incorrect API key provided"),
    (None, "You didn't provide an API key"),
])
async def test_openai_refusing_the_key_is_a_clear_unavailable(openai, key, words):
    with pytest.raises(SpeechUnavailable) as caught:
        await speak(openai_voice(openai, key=key), "Hello")
    assert caught.value.status == 401
    assert refusal(caught).startswith("refused the key (HTTP 401): " + words)
    assert "sk-proj-wrong-one" not in str(caught.value)


async def test_openai_unknown_voice_is_told_in_openais_words(openai):
    with pytest.raises(SpeechUnavailable) as caught:
        await speak(openai_voice(openai, voice="af_heart"), "Hello")
    assert refusal(caught) == "answered HTTP 400: Invalid value for 'voice': 'af_heart'."


@pytest.mark.parametrize("rate", [8000, 16000])
async def test_openai_transcription_is_a_multipart_wav_upload(openai, rate):
    assert await hear(openai_ears(openai), rate=rate) == "Hello, I would like to book a table."
    asked = openai.requests[-1]
    assert asked.path == "/v1/audio/transcriptions"
    assert asked.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert asked.headers["content-type"].startswith("multipart/form-data; boundary=")
    assert {name: value for name, value in asked.fields.items() if name != "file"} == {
        "model": "whisper-1", "response_format": "json", "language": "en"}
    assert asked.wav == (1, 2, rate, TURN)


async def test_openai_unknown_transcription_model_is_unavailable(openai):
    with pytest.raises(SpeechUnavailable) as caught:
        await hear(openai_ears(openai, model="whisper-2"))
    assert caught.value.status == 404
    assert "The model `whisper-2` does not exist" in refusal(caught)


# -- speaches (faster-whisper) ----------------------------------------------------------


def speaches_ears(fake: FakeSpeaches, model: str = "Systran/faster-whisper-small",
                  key: str | None = None, http=None) -> OpenAIRecogniser:
    return OpenAIRecogniser(Endpoint(fake.base_url, key), model=model, http=http)


@pytest.mark.parametrize("rate", [8000, 16000])
async def test_speaches_transcribes_a_turn_and_its_leading_space_is_trimmed(
        speaches, speech_http, rate):
    text = await hear(speaches_ears(speaches, http=speech_http), rate=rate)
    assert text == "Hello, I would like to book a table."
    asked = speaches.requests[-1]
    assert asked.fields["model"] == "Systran/faster-whisper-small"
    assert asked.fields["response_format"] == "json"
    assert "language" not in asked.fields  # left out: faster-whisper detects it
    assert asked.wav == (1, 2, rate, TURN)


async def test_speaches_model_not_downloaded_is_its_own_sentence(speaches):
    with pytest.raises(SpeechUnavailable) as caught:
        await hear(speaches_ears(speaches, model="Systran/faster-whisper-large-v3"))
    assert caught.value.status == 404
    assert refusal(caught) == ("answered HTTP 404: Model 'Systran/faster-whisper-large-v3' "
                               "is not installed locally. You can download the model using "
                               "`POST /v1/models`")


async def test_speaches_422_names_the_missing_field(speaches):
    # an emptied voice_live.stt_model: FastAPI takes the empty form value as missing
    with pytest.raises(SpeechUnavailable) as caught:
        await hear(speaches_ears(speaches, model=""))
    assert caught.value.status == 422
    assert refusal(caught) == "answered HTTP 422: body.model: Field required"


async def test_speaches_started_with_a_key_takes_it_as_bearer(speaches):
    speaches.api_key = "speaches-secret"
    assert await hear(speaches_ears(speaches, key="speaches-secret"))
    assert speaches.requests[-1].headers["authorization"] == "Bearer speaches-secret"
    with pytest.raises(SpeechUnavailable) as caught:
        await hear(speaches_ears(speaches, key="not-it"))
    assert caught.value.status == 403
    assert refusal(caught) == ("refused the key (HTTP 403): Invalid API key. The provided "
                               "API key is incorrect.")


@pytest.mark.parametrize("answered", ["text", "verbose_json"])
async def test_a_transcript_as_plain_text_or_verbose_json_is_read(speaches, answered):
    speaches.forced_format = answered  # a server that ignores response_format
    assert await hear(speaches_ears(speaches)) == "Hello, I would like to book a table."


async def test_an_empty_plain_text_transcript_is_nothing_heard(speaches):
    speaches.forced_format, speaches.transcript = "text", ""
    assert await hear(speaches_ears(speaches)) == ""


# -- Kokoro-FastAPI ----------------------------------------------------------------------


def kokoro_voice(fake: FakeKokoro, voice: str = "af_heart", model: str = "kokoro",
                 key: str | None = None, http=None) -> OpenAISynthesiser:
    return OpenAISynthesiser(Endpoint(fake.base_url, key), model=model, voice=voice,
                             http=http)


@pytest.mark.parametrize("chunk_bytes", [1, 4801])
async def test_kokoro_streams_chunked_24khz_pcm_by_default(kokoro, speech_http, chunk_bytes):
    kokoro.chunk_bytes = chunk_bytes
    chunks = await speak(kokoro_voice(kokoro, http=speech_http), "Good evening. How can I help?")
    assert all(chunk and len(chunk) % 2 == 0 for chunk in chunks)
    assert b"".join(chunks) == spoken_pcm("Good evening. How can I help?")
    asked = kokoro.requests[-1]
    assert "stream" not in asked.fields  # Kokoro-FastAPI streams unless told not to
    assert "authorization" not in asked.headers


@pytest.mark.parametrize("voice", ["af_heart", "af_bella+af_sky", "nova"])
async def test_kokoro_voices_blends_and_openai_names(kokoro, voice):
    assert await speak(kokoro_voice(kokoro, voice=voice, model="tts-1"), "Hi")


async def test_kokoro_ignores_a_key_sent_as_bearer(kokoro):
    assert await speak(kokoro_voice(kokoro, key="anything"), "Hi")
    assert kokoro.requests[-1].headers["authorization"] == "Bearer anything"


@pytest.mark.parametrize("voice, model, words", [
    ("af_nobody", "kokoro", "Voice 'af_nobody' not found. Available voices: af_bella"),
    ("af_heart", "tts-2", "Unsupported model: tts-2"),
])
async def test_kokoro_refusals_are_told_in_kokoros_words(kokoro, voice, model, words):
    with pytest.raises(SpeechUnavailable) as caught:
        await speak(kokoro_voice(kokoro, voice=voice, model=model), "Hello")
    assert caught.value.status == 400
    assert refusal(caught).startswith(f"answered HTTP 400: {words}")


async def test_kokoro_422_names_the_field_and_what_it_takes(kokoro):
    # svc always asks for pcm; a field Kokoro-FastAPI refuses reads as FastAPI says it
    body = {"model": "kokoro", "voice": "af_heart", "input": "Hi", "response_format": "ogg"}
    with anyio.fail_after(GUARD), pytest.raises(SpeechUnavailable) as caught:
        async with request(None, Endpoint(kokoro.base_url), "audio/speech", SpeechTimeouts(),
                           json=body):
            pass
    assert caught.value.status == 422
    assert refusal(caught) == ("answered HTTP 422: body.response_format: Input should be "
                               "'mp3', 'opus', 'aac', 'flac', 'wav' or 'pcm'")
