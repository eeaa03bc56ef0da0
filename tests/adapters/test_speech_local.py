"""The local engines for real: eSpeak NG speaks, PocketSphinx understands it."""

from __future__ import annotations

import array
import math
import pickle
import random
import subprocess
import sys
import time

import anyio
import pytest

from adapters.speech import Recogniser, SpeechUnavailable, Synthesiser
from adapters.speech import espeak
from adapters.speech.espeak import LocalSynthesiser
from adapters.speech.sphinx import LocalRecogniser
from kernels.resample import Resampler

pytestmark = pytest.mark.anyio

GUARD = 60  # worker processes start and load a model: generous, never asserted


async def speak(synthesiser, text: str) -> list[bytes]:
    with anyio.fail_after(GUARD):
        return [chunk async for chunk in synthesiser.stream(text)]


def rms(pcm: bytes) -> float:
    samples = array.array("h", pcm)
    return math.sqrt(sum(s * s for s in samples) / max(1, len(samples))) / 32768


async def test_local_engines_follow_the_protocols():
    assert isinstance(LocalSynthesiser(), Synthesiser)
    assert isinstance(LocalRecogniser(), Recogniser)
    assert LocalSynthesiser.sample_rate == 16000


async def test_espeak_says_a_phrase_as_16khz_pcm_of_plausible_length():
    chunks = await speak(LocalSynthesiser("en-us"), "Hello, this is a test of the telephone line.")
    assert all(chunk and len(chunk) % 2 == 0 for chunk in chunks)
    pcm = b"".join(chunks)
    seconds = len(pcm) / 2 / 16000
    assert 1.2 < seconds < 6, seconds  # nine words at speaking pace
    assert rms(pcm) > 0.02  # speech, not silence


async def test_longer_text_takes_longer_to_say():
    engine = LocalSynthesiser()
    short = b"".join(await speak(engine, "Yes."))
    long = b"".join(await speak(engine, "Yes. I can book you in on Tuesday at three o'clock."))
    assert 0 < len(short) < len(long)


@pytest.mark.parametrize("asked, used", [("alloy", "en"), ("en-us", "en-us"), ("de", "de")])
async def test_the_voice_is_used_when_espeak_knows_it_else_english(asked, used):
    # eSpeak NG varies its output slightly from run to run, so the voice it was set to
    # is read back rather than the audio compared.
    assert b"".join(await speak(LocalSynthesiser(asked), "Good morning."))
    assert espeak._engine is not None and espeak._engine._voice == used


async def test_nothing_to_say_gives_no_audio():
    assert await speak(LocalSynthesiser(), "  ") == []


async def test_pocketsphinx_understands_espeak_at_16khz():
    pcm = b"".join(await speak(LocalSynthesiser("en-us"), "one two three four five"))
    with anyio.fail_after(GUARD):
        text = await LocalRecogniser().transcribe(pcm, 16000)
    words = text.split()
    # eSpeak's "one" is often heard as "well"; the middle numbers come through.
    assert {"three", "four"} <= set(words), text


async def test_pocketsphinx_hears_nothing_in_silence_at_8khz():
    with anyio.fail_after(GUARD):
        assert await LocalRecogniser().transcribe(bytes(2 * 8000), 8000) == ""


async def test_telephone_band_audio_is_converted_for_the_wide_band_model():
    pcm = b"".join(await speak(LocalSynthesiser("en-us"), "one two three four five"))
    telephone = Resampler(16000, 8000).process(pcm)
    with anyio.fail_after(GUARD):
        text = await LocalRecogniser().transcribe(telephone, 8000)
    assert isinstance(text, str) and text.strip() == text


async def test_local_recognition_refuses_rates_that_do_not_convert():
    with pytest.raises(ValueError, match="8000 or 16000"):
        await LocalRecogniser().transcribe(bytes(320), 24000)
    assert await LocalRecogniser().transcribe(b"", 16000) == ""


def test_speech_unavailable_survives_the_trip_from_a_worker_process():
    error = pickle.loads(pickle.dumps(SpeechUnavailable("is not installed", engine="local x")))
    assert (error.message, error.engine, str(error)) == ("is not installed", "local x",
                                                         "local x: is not installed")


async def test_a_turn_is_heard_the_same_whatever_the_worker_decoded_before():
    from adapters.speech import sphinx

    pcm = b"".join(await speak(LocalSynthesiser("en-us"), "What are your opening hours?"))
    noise = bytes(random.Random(7).getrandbits(8) for _ in range(32000))

    def heard() -> tuple[str, float]:
        text = sphinx.decode(pcm)
        return text, sphinx._decoder(None).hyp().score

    first = heard()
    sphinx.decode(noise)  # another caller's turn, loud and unlike speech
    assert heard() == first



def test_one_text_is_one_audio_whatever_the_clock():
    """eSpeak NG seeds its random breath and jitter from the clock when it starts;
    the synthesiser seeds it for every text, so two fresh processes seconds apart
    make the same audio of a text."""
    program = ("import hashlib, sys\n"
               "from adapters.speech.espeak import _speak\n"
               "sys.stdout.write(hashlib.sha256(_speak('Is parking free?', 'en-us+f2'))"
               ".hexdigest())\n")
    digests = []
    for _ in range(2):
        if digests:
            time.sleep(1.1)  # the clock's seconds move on between the two
        made = subprocess.run([sys.executable, "-c", program], capture_output=True,
                              text=True, check=True, timeout=GUARD)
        digests.append(made.stdout)
    assert len(digests[0]) == 64 and digests[0] == digests[1]
