"""The OpenAI-compatible speech engines and the turn detector against the loopback fake:
answers, streaming, slow, down, error statuses, cancellation."""

from __future__ import annotations

import struct
from contextlib import aclosing

import anyio
import pytest

from adapters.speech import (
    Recogniser, SpeechTimeouts, SpeechUnavailable, Synthesiser, TurnDetector)
from adapters.speech.http import Endpoint
from adapters.speech.openai import OpenAIRecogniser, OpenAISynthesiser, input_pieces
from adapters.speech.turns import HttpTurnDetector
from tests.support.listener import SilentListener, free_port
from tests.fakes.speech import SpeechBehaviour, speech, speech_http, spoken_pcm  # noqa: F401

pytestmark = pytest.mark.anyio

# A generous guard so a broken test fails instead of hanging; never a timing assertion.
GUARD = 10
QUICK = SpeechTimeouts(connect=2, read=0.3)


def synthesiser(speech, speech_http=None, timeouts=SpeechTimeouts(), key="sk-speech"):
    return OpenAISynthesiser(Endpoint(speech.base_url, key), model="tts-1", voice="alloy",
                             timeouts=timeouts, http=speech_http)


def recogniser(speech, speech_http=None, timeouts=SpeechTimeouts(), language=None):
    return OpenAIRecogniser(Endpoint(speech.base_url, "sk-listen"), model="whisper-1",
                            language=language, timeouts=timeouts, http=speech_http)


def detector(speech, speech_http=None, timeouts=SpeechTimeouts()):
    return HttpTurnDetector(Endpoint(speech.turn_url), allow_hosts=("127.0.0.1",),
                            timeouts=timeouts, http=speech_http)


async def speak(engine, text: str) -> list[bytes]:
    with anyio.fail_after(GUARD):
        return [chunk async for chunk in engine.stream(text)]


async def test_the_engines_follow_the_protocols(speech):
    assert isinstance(synthesiser(speech), Synthesiser)
    assert isinstance(recogniser(speech), Recogniser)
    assert isinstance(detector(speech), TurnDetector)
    assert synthesiser(speech).sample_rate == 24000


# -- synthesis ----------------------------------------------------------------------


@pytest.mark.parametrize("pooled", [True, False], ids=["pooled", "own-session"])
async def test_synthesis_streams_the_whole_pcm_in_even_chunks(speech, speech_http, pooled):
    chunks = await speak(synthesiser(speech, speech_http if pooled else None), "Good morning.")
    assert all(len(chunk) % 2 == 0 and chunk for chunk in chunks)
    assert b"".join(chunks) == spoken_pcm("Good morning.")


async def test_synthesis_sends_the_openai_request(speech):
    await speak(synthesiser(speech), "Hello there")
    request = speech.requests[-1]
    assert request.path == "/v1/audio/speech"
    assert request.fields == {"model": "tts-1", "voice": "alloy", "input": "Hello there",
                              "response_format": "pcm"}
    assert request.headers["authorization"] == "Bearer sk-speech"


async def test_nothing_to_say_gives_no_audio_and_no_request(speech):
    assert await speak(synthesiser(speech), " \n") == []
    assert speech.requests == []


async def test_text_longer_than_openai_accepts_is_spoken_in_pieces(speech):
    text = "The first sentence is here. And the second one follows it."
    engine = OpenAISynthesiser(Endpoint(speech.base_url), model="tts-1", voice="alloy",
                               max_input=40)  # 4096 by default, as OpenAI's limit
    chunks = await speak(engine, text)
    inputs = [request.fields["input"] for request in speech.requests]
    assert inputs == ["The first sentence is here.", "And the second one follows it."]
    assert " ".join(inputs) == text.strip()
    assert b"".join(chunks) == b"".join(spoken_pcm(piece) for piece in inputs)


@pytest.mark.parametrize("text, pieces", [
    ("", []),
    ("Short", ["Short"]),
    ("a" * 12, ["aaaaa", "aaaaa", "aa"]),
    ("ab cd ef", ["ab", "cd ef"]),
    ("Hi. Then more words", ["Hi.", "Then", "more", "words"]),
    ("One. Two three", ["One.", "Two", "three"]),
])
def test_input_pieces_cut_at_sentences_then_spaces(text, pieces):
    assert input_pieces(text, limit=5) == pieces


async def test_a_keyless_engine_gets_no_authorization_header(speech):
    await speak(synthesiser(speech, key=None), "Hi")
    assert "authorization" not in speech.requests[-1].headers


async def test_pooled_synthesis_reuses_its_connection(speech, speech_http):
    engine = synthesiser(speech, speech_http)
    await speak(engine, "One.")
    await speak(engine, "Two.")
    assert speech.open_connections == 1


@pytest.mark.parametrize("status, words", [(401, "refused the key"), (404, "HTTP 404"),
                                           (429, "HTTP 429"), (500, "HTTP 500")])
async def test_error_statuses_are_unavailable_with_the_engines_message(speech, status, words):
    speech.behaviour = SpeechBehaviour(status=status, error_message="no such voice")
    with pytest.raises(SpeechUnavailable, match=words) as caught:
        await speak(synthesiser(speech), "Hello")
    assert "no such voice" in str(caught.value)
    assert caught.value.engine == f"127.0.0.1:{speech.port}"
    assert "sk-speech" not in str(caught.value)


async def test_an_engine_that_is_down_is_unavailable():
    engine = OpenAISynthesiser(Endpoint(f"http://127.0.0.1:{free_port()}/v1"),
                               model="tts-1", voice="alloy")
    with pytest.raises(SpeechUnavailable, match="cannot connect"):
        await speak(engine, "Hello")


async def test_a_slow_first_byte_times_out(speech):
    speech.behaviour = SpeechBehaviour(first_byte_delay=30)
    with pytest.raises(SpeechUnavailable, match="did not answer in time"):
        await speak(synthesiser(speech, timeouts=QUICK), "Hello")


async def test_slow_chunks_within_the_read_timeout_are_waited_for(speech):
    speech.behaviour = SpeechBehaviour(chunk_delay=0.05, chunk_bytes=6000)
    chunks = await speak(synthesiser(speech, timeouts=SpeechTimeouts(connect=2, read=5)), "Slowly")
    assert b"".join(chunks) == spoken_pcm("Slowly")


async def test_audio_is_passed_on_as_it_arrives_and_a_stall_times_out(speech):
    speech.behaviour = SpeechBehaviour(interrupt_after=2, interrupt="stall")
    received = []
    with pytest.raises(SpeechUnavailable, match="did not answer in time"):
        with anyio.fail_after(GUARD):
            async for chunk in synthesiser(speech, timeouts=QUICK).stream("A long sentence here"):
                received.append(chunk)
    # the two chunks sent before the stall were passed on: the answer is read as a stream
    assert b"".join(received) == spoken_pcm("A long sentence here")[: 2 * 4801]


async def test_a_stream_cut_mid_way_is_unavailable(speech):
    speech.behaviour = SpeechBehaviour(interrupt_after=1, interrupt="drop")
    with pytest.raises(SpeechUnavailable, match="connection broke"):
        await speak(synthesiser(speech), "A long sentence here")


async def test_an_answer_in_words_is_not_audio(speech):
    speech.behaviour = SpeechBehaviour(garbage=b'{"detail": "ok"}')
    with pytest.raises(SpeechUnavailable, match="not audio"):
        await speak(synthesiser(speech), "Hello")


async def test_leaving_the_stream_early_closes_the_connection(speech, speech_http):
    speech.behaviour = SpeechBehaviour(chunk_delay=0.05, chunk_bytes=480)
    with anyio.fail_after(GUARD):
        async with aclosing(synthesiser(speech, speech_http).stream("Barge in over this")) as stream:
            async for _ in stream:
                break  # the caller spoke over the line
        await speech.wait_open_connections(0)


# -- recognition --------------------------------------------------------------------


@pytest.mark.parametrize("rate", [8000, 16000])
async def test_recognition_uploads_the_turn_as_a_wav_and_returns_the_text(speech, speech_http, rate):
    speech.behaviour = SpeechBehaviour(text="  I would like an appointment. ")
    pcm = struct.pack("<5h", 0, 100, -100, 2000, -32768)
    with anyio.fail_after(GUARD):
        text = await recogniser(speech, speech_http, language="en").transcribe(pcm, rate)
    assert text == "I would like an appointment."
    request = speech.requests[-1]
    assert request.path == "/v1/audio/transcriptions"
    assert request.wav == (1, 2, rate, pcm)
    assert request.fields["model"] == "whisper-1"
    assert request.fields["language"] == "en"
    assert request.fields["response_format"] == "json"
    assert request.headers["authorization"] == "Bearer sk-listen"


async def test_silence_recognised_as_nothing_is_an_empty_string(speech):
    speech.behaviour = SpeechBehaviour(text="")
    assert await recogniser(speech).transcribe(bytes(3200), 16000) == ""


async def test_an_empty_turn_is_not_sent(speech):
    assert await recogniser(speech).transcribe(b"", 8000) == ""
    assert speech.requests == []


async def test_recognition_refuses_rates_that_do_not_convert(speech):
    with pytest.raises(ValueError, match="8000 or 16000"):
        await recogniser(speech).transcribe(bytes(320), 24000)


@pytest.mark.parametrize("status", [400, 401, 500, 503])
async def test_recognition_errors_are_unavailable(speech, status):
    speech.behaviour = SpeechBehaviour(status=status, error_message="model not loaded")
    with pytest.raises(SpeechUnavailable, match="model not loaded"):
        await recogniser(speech).transcribe(bytes(320), 8000)


@pytest.mark.parametrize("garbage", [b"not json", b'{"words": "hi"}', b'{"text": 3}', b"[]"])
async def test_recognition_answers_that_are_not_the_protocol_are_unavailable(speech, garbage):
    speech.behaviour = SpeechBehaviour(garbage=garbage)
    with pytest.raises(SpeechUnavailable, match="text"):
        await recogniser(speech).transcribe(bytes(320), 8000)


async def test_slow_recognition_times_out(speech):
    speech.behaviour = SpeechBehaviour(first_byte_delay=30)
    with anyio.fail_after(GUARD), pytest.raises(SpeechUnavailable, match="in time"):
        await recogniser(speech, timeouts=QUICK).transcribe(bytes(320), 8000)


async def test_recognition_down_is_unavailable():
    engine = OpenAIRecogniser(Endpoint(f"http://127.0.0.1:{free_port()}/v1"), model="m")
    with pytest.raises(SpeechUnavailable, match="cannot connect"):
        await engine.transcribe(bytes(320), 8000)


# -- turn detection -----------------------------------------------------------------


async def test_turn_detection_sends_the_transcript_and_reads_the_probability(speech, speech_http):
    speech.behaviour = SpeechBehaviour(probability=0.25)
    with anyio.fail_after(GUARD):
        assert await detector(speech, speech_http).end_of_turn("I'd like to book a") == 0.25
    assert speech.requests[-1].path == "/turn"
    assert speech.requests[-1].fields == {"transcript": "I'd like to book a"}


@pytest.mark.parametrize("answer", [0, 1])
async def test_turn_detection_accepts_the_ends_of_the_range(speech, answer):
    speech.behaviour = SpeechBehaviour(probability=answer)
    assert await detector(speech).end_of_turn("Yes.") == float(answer)


@pytest.mark.parametrize("answer", ['{"probability": 1.5}', '{"probability": -0.1}',
                                    '{"probability": true}', '{"probability": "high"}',
                                    '{"p": 0.5}', "0.5x", '{"probability": NaN}'])
async def test_turn_detection_answers_outside_the_protocol_are_unavailable(speech, answer):
    speech.behaviour = SpeechBehaviour(probability=answer)
    with pytest.raises(SpeechUnavailable, match="probability"):
        await detector(speech).end_of_turn("Yes.")


async def test_turn_detection_that_hangs_times_out(speech):
    speech.behaviour = SpeechBehaviour(first_byte_delay=30)
    with anyio.fail_after(GUARD), pytest.raises(SpeechUnavailable, match="in time"):
        await detector(speech, timeouts=QUICK).end_of_turn("Yes.")


async def test_turn_detection_errors_and_absence_are_unavailable(speech):
    speech.behaviour = SpeechBehaviour(status=502)
    with pytest.raises(SpeechUnavailable, match="HTTP 502"):
        await detector(speech).end_of_turn("Yes.")
    gone = HttpTurnDetector(Endpoint(f"http://127.0.0.1:{free_port()}/turn"),
                            allow_hosts=("127.0.0.1",))
    with pytest.raises(SpeechUnavailable, match="cannot connect"):
        await gone.end_of_turn("Yes.")


@pytest.mark.parametrize("host", ["１２７.０.０.１", "127。0。0。1", "127.0.0.1", "localhost"])
async def test_turn_detection_passes_the_egress_gate(host):
    # voice.turn_detection_url is typed into a setting: unless allowed, it may not
    # reach this machine, however its host is written.
    with SilentListener() as listener:
        gated = HttpTurnDetector(Endpoint(f"http://{host}:{listener.port}/turn"))
        with pytest.raises(SpeechUnavailable, match="not allowed"):
            await gated.end_of_turn("Yes.")
        assert listener.connections() == 0
