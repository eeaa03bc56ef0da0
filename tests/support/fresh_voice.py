"""Speech from eSpeak NG as a fresh process makes it, for tests that rest on recognition.

eSpeak NG carries state from one text to the next inside a process: its pitch flutter
advances with every sample it makes and nothing resets it. So what a recogniser hears
of a text made in the test process depends on what that process synthesised before,
which under xdist depends on which modules ran first on the worker. In a fresh
process a text is always the same audio, and the test the same every run.

``fresh_speech`` gives the audio of each text; ``Recorded`` hands it to anything that
takes a synthesiser (the call simulator's ``prepare``).
"""

from __future__ import annotations

__all__ = ["Recorded", "fresh_speech"]

import multiprocessing
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ProcessPoolExecutor

import anyio

from adapters.speech.espeak import OUTPUT_RATE


def _synthesise(texts: Sequence[str], voice: str) -> list[bytes]:
    from adapters.speech.espeak import _speak

    return [_speak(text, voice) for text in texts]


async def fresh_speech(texts: Sequence[str], voice: str) -> dict[str, bytes]:
    """Each of ``texts`` as 16 kHz PCM16, synthesised in order by a new process."""
    def run() -> list[bytes]:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            return pool.submit(_synthesise, list(texts), voice).result()

    return dict(zip(texts, await anyio.to_thread.run_sync(run), strict=True))


class Recorded:
    """A synthesiser that says only what it was given, as it was given."""

    sample_rate = OUTPUT_RATE

    def __init__(self, audio: dict[str, bytes]) -> None:
        self.audio = audio

    async def stream(self, text: str) -> AsyncIterator[bytes]:
        yield self.audio[text]
