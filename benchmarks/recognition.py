"""Recognition on a line: the bundled general model against a line's own model.

The line is a small clinic's: its agent's instructions, a Library page, and the call
tools (booking, changing, cancelling, messages, a person). The held-out set is what a
caller says there, written here and never part of the line's corpus: questions about
the Library's content, booking and message phrases, yes and no, dates, times and
references. Each is spoken by eSpeak NG in voices and at speeds other than the
agent's own (the agent speaks ``en-gb``), set to −26 dBFS active speech level, mixed
with noise at 20 dB SNR, passed through μ-law at 8 kHz (``benchmarks.turn_corpus``
does the level, the noise and the line), with 300 ms of the line before and after, as
the call's pre-roll and closing pause give the recogniser.

For each model it prints the word error rate, the share of utterances whose meaning
survives, and the decode time as a share of the audio's length (one core, in
process). Meaning survives when the ``local`` model does with the recognised words
what it does with the true ones: for a question, the same answer or tool call; for an
answer, the call's next step (the tool call, or what it says or asks next) in the
conversation that asked for it, and the same day, time and digits read from the words.
So "yeah" for "yes" keeps the meaning of a confirmation, and "tomorrow at nine" for
"tomorrow at ten" loses it.

    python -m benchmarks.recognition
"""

from __future__ import annotations

import argparse
import datetime as dt
import tempfile
import time
import uuid
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

from adapters.speech import sphinx
from adapters.speech.line_model import build_line_model
from app.diary.call_tools import (BOOK_APPOINTMENT, CANCEL_APPOINTMENT, CHANGE_APPOINTMENT,
                                  OFFER_TIMES, PUT_THROUGH, TAKE_MESSAGE)
from benchmarks.turn_corpus import RATE, at_level, line, noise, speak
from core.local_model import LocalTurn, respond
from core.passages import Passage
from core.records import frozen
from core.speech_model import LineText, line_sentences, spoken_words
from core.spoken import part_of_day, read_clock, read_day, read_digits
from kernels.resample import resample

LEVEL, SNR = -26.0, 20.0
MARGIN = 0.3  # seconds of the line before and after the speech
VOICES = (("en-us", 160), ("en-us+f3", 180), ("en-gb-x-rp", 150), ("en-us+m3", 175))
TOOLS = (OFFER_TIMES, BOOK_APPOINTMENT, CHANGE_APPOINTMENT, CANCEL_APPOINTMENT, TAKE_MESSAGE,
         PUT_THROUGH)

INSTRUCTIONS = (
    "You are the receptionist of Kerrigan Physiotherapy in Hebden Bridge. Answer questions "
    "about the clinic from its documents, book, move and cancel appointments, and take "
    "messages for the physiotherapists. Keep answers short.")
LIBRARY = """
Kerrigan Physiotherapy is at 14 Albert Street, Hebden Bridge, next to the post office.
We are open from 8am to 6pm Monday to Friday, and from 9am to 1pm on Saturday.
We are closed on Sundays and bank holidays.
An assessment costs 55 pounds and a follow up treatment costs 45 pounds.
The car park gate code is 4 5 2 1. Parking is free for patients.
Please arrive ten minutes early for your first appointment and wear loose clothing.
We treat back pain, neck pain, sports injuries and arthritis.
Our physiotherapists are Sarah Kerrigan, Tom Walsh and Priya Shah.
Sports massage sessions last forty five minutes.
You can cancel free of charge up to 24 hours before your appointment.
"""


#: The call's present instant for the answers (a Monday morning in the diary's zone).
NOW = dt.datetime(2026, 11, 23, 9, 0, tzinfo=ZoneInfo("Europe/London"))
#: What the agent had asked before each kind of answer: the call so far.
ASKED = {
    "confirm": ("I'd like to book an appointment tomorrow at ten",
                "May I have your name, please?", "Sarah Jones",
                "Shall I book Tuesday the twenty fourth of November at ten a.m. for Sarah Jones?"),
    "when": ("I'd like to book an appointment", "What day and time would suit you?"),
    "reference": ("I need to cancel my booking", "What is your booking reference?"),
    "name": ("I'd like to book an appointment tomorrow at ten",
             "May I have your name, please?"),
    "number": ("Can I leave a message?", "May I have your name, please?", "Sarah Jones",
               "What number can we call you back on?"),
}


@frozen
class Said:
    text: str
    #: what the agent had asked (a key of ``ASKED``); None: said first in the call
    asked: str | None = None


HELD_OUT = (
    Said("When are you open on Saturdays?"),
    Said("How much does an assessment cost?"),
    Said("What's the code for the car park gate?"),
    Said("Where is the clinic?"),
    Said("Do you treat sports injuries?"),
    Said("How long is a sports massage?"),
    Said("Is parking free?"),
    Said("Are you open on Sunday?"),
    Said("Can I cancel my appointment for free?"),
    Said("I'd like to book an appointment please."),
    Said("Could I leave a message for Tom Walsh?"),
    Said("Can I talk to someone please?"),
    Said("I need to move my booking."),
    Said("Yes please.", "confirm"),
    Said("No, thank you.", "confirm"),
    Said("Yes.", "confirm"),
    Said("That's right.", "confirm"),
    Said("Thursday afternoon.", "when"),
    Said("Tomorrow at ten.", "when"),
    Said("The third of December.", "when"),
    Said("Half past two on Monday.", "when"),
    Said("Next Friday morning.", "when"),
    Said("My reference is four seven two nine one three.", "reference"),
    Said("My name is Sarah Jones.", "name"),
    Said("My number is oh seven seven double oh one two three four five six.", "number"),
    Said("Thank you, goodbye."),
)


def _passages() -> list[Passage]:
    library, document = uuid.uuid4(), uuid.uuid4()
    lines = [text for text in LIBRARY.strip().splitlines() if text]
    return [Passage(library, document, "Clinic", n, 0, len(text), text, 1.0)
            for n, text in enumerate(lines)]


def _understood(said: Said, text: str, passages: list[Passage]) -> tuple:
    """What the ``local`` model makes of ``text`` said where ``said`` was."""
    if said.asked is None:
        reply = respond(LocalTurn(text, passages, TOOLS))
        return type(reply), getattr(reply, "name", reply)
    history = [{"role": ("user", "assistant")[n % 2], "content": turn}
               for n, turn in enumerate(ASKED[said.asked])]
    step = respond(LocalTurn(text, passages, TOOLS, history=history, now=NOW))
    return (step, read_day(text, NOW), read_clock(text), part_of_day(text),
            read_digits(text, least=4))


def _meaning(said: Said, heard: str, passages: list[Passage]) -> bool:
    # Against the words a perfect recogniser would write: no capitals, no punctuation.
    perfect = " ".join(spoken_words(said.text))
    return _understood(said, heard, passages) == _understood(said, perfect, passages)


def _errors(reference: list[str], hypothesis: list[str]) -> int:
    """Word-level edit distance."""
    row = list(range(len(hypothesis) + 1))
    for i, word in enumerate(reference, start=1):
        previous, row[0] = row[0], i
        for j, heard in enumerate(hypothesis, start=1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1,
                                           previous + (word != heard))
    return row[-1]


def _on_the_line(text: str, voice: str, speed: int, rng: np.random.Generator,
                 babble: list[np.ndarray]) -> bytes:
    speech = at_level(speak(text, voice, speed), LEVEL)
    margin = np.zeros(int(MARGIN * RATE))
    padded = np.concatenate([margin, speech, margin])
    power = 10 ** ((LEVEL - SNR) / 20) * 32768
    kind = ("white", "pink", "babble")[int(rng.integers(3))]
    mixed = padded + power * noise(kind, len(padded), rng, babble)
    return resample(line(mixed).tobytes(), RATE, sphinx.MODEL_RATE)


def run(voices=VOICES) -> None:
    rng = np.random.default_rng(7)
    babble = [speak(t, "en-gb", 170) for t in ("The weather is lovely today.",
                                                 "I'll see you at the station.",
                                                 "She bought three apples and a pear.")]
    passages = _passages()
    text = LineText(INSTRUCTIONS, [p.text for p in passages], [t.description for t in TOOLS])
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        model = build_line_model(line_sentences(text), Path(scratch) / "line")
        print(f"line model built in {time.perf_counter() - started:.2f} s")
        audio = [(said, _on_the_line(said.text, voice, speed, rng, babble))
                 for voice, speed in voices for said in HELD_OUT]
        print(f"{len(audio)} utterances ({len(HELD_OUT)} sentences x {len(voices)} voices), "
              f"{LEVEL:g} dBFS, {SNR:g} dB SNR, mu-law 8 kHz")
        print(f"{'model':<10} {'WER':>6} {'meaning kept':>13} {'decode x real time':>19}")
        for label, directory in (("general", None), ("line", str(model.directory))):
            sphinx.decode(b"\0\0" * 1600, directory)  # the decoder is built outside the clock
            errors = words = kept = 0
            decoding = spoken = 0.0
            for said, pcm in audio:
                started = time.perf_counter()
                heard = sphinx.decode(pcm, directory)
                decoding += time.perf_counter() - started
                spoken += len(pcm) / 2 / sphinx.MODEL_RATE
                truth = spoken_words(said.text)
                errors += _errors(truth, heard.split())
                words += len(truth)
                kept += _meaning(said, heard, passages)
            print(f"{label:<10} {errors / words:>6.1%} {kept / len(audio):>13.1%} "
                  f"{decoding / spoken:>19.2f}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    run()
