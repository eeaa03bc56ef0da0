"""A line's own language model for PocketSphinx: built from its sentences, kept on disk.

What belongs here: ``LineModel`` (where a built model's two files are) and
``build_line_model``, which writes them: an ARPA trigram model made with
PocketSphinx's own builder (``pocketsphinx.lm.ArpaBoLM``) and a dictionary holding
just the model's words — the bundled CMU dictionary's pronunciations where it has the
word, else eSpeak NG's (``core.speech_model.cmu_phones``). What the sentences are is
``core.speech_model``'s business; when to build is the application's.

Building is pure Python over the whole corpus (a second or more for a large
Library), so it runs in a worker process (``build_in_worker``), never on the event
loop that paces the calls' audio. A model is written beside its final place and moved
there whole, so a decoder never reads half a model.
"""

from __future__ import annotations

__all__ = ["LineModel", "build_in_worker", "build_line_model", "bundled_dictionary"]

import os
import shutil
from pathlib import Path

import anyio.to_process

from adapters.speech.espeak import phoneme_mnemonics
from core.records import frozen
from core.speech_model import UnknownPhoneme, cmu_phones

LM_FILE = "line.lm"
DICTIONARY_FILE = "line.dict"


@frozen
class LineModel:
    """A built model: ``directory`` holds ``line.lm`` and ``line.dict``."""

    directory: Path

    @property
    def language_model(self) -> Path:
        return self.directory / LM_FILE

    @property
    def dictionary(self) -> Path:
        return self.directory / DICTIONARY_FILE

    def exists(self) -> bool:
        return self.language_model.is_file() and self.dictionary.is_file()


def bundled_dictionary() -> Path:
    """The CMU dictionary that comes with the ``pocketsphinx`` wheel."""
    from pocketsphinx import get_model_path

    return Path(get_model_path()) / "en-us" / "cmudict-en-us.dict"


def _pronunciations(words: set[str]) -> dict[str, list[str]]:
    """The bundled dictionary's lines for ``words`` (a word may have several)."""
    found: dict[str, list[str]] = {}
    with open(bundled_dictionary(), encoding="utf-8") as lines:
        for line in lines:
            entry, _, phones = line.strip().partition(" ")
            word = entry.split("(", 1)[0]
            if word in words:
                found.setdefault(word, []).append(phones.strip())
    return found


def _guessed(words: list[str]) -> dict[str, list[str]]:
    """eSpeak NG's pronunciations of ``words``, where every phoneme maps."""
    guessed = {}
    for word, mnemonics in phoneme_mnemonics(words).items():
        try:
            phones = cmu_phones(mnemonics)
        except UnknownPhoneme:
            continue
        if phones:
            guessed[word] = [" ".join(phones)]
    return guessed


def build_line_model(sentences: list[str], directory: Path) -> LineModel:
    """Write the model of ``sentences`` (spoken words, one sentence each) to
    ``directory``, replacing what was there. Blocking: see ``build_in_worker``."""
    from pocketsphinx.lm import ArpaBoLM

    words = {word for sentence in sentences for word in sentence.split()}
    sayable = _pronunciations(words)
    sayable.update(_guessed(sorted(words - sayable.keys())))
    # A word with no pronunciation cannot be heard: leave it out of the sentences
    # rather than give the decoder a word it has no sounds for.
    kept = [" ".join(w for w in sentence.split() if w in sayable) for sentence in sentences]
    model = ArpaBoLM(text="\n".join(s for s in kept if s), add_start=True)
    model.compute()

    directory = Path(directory)
    building = directory.with_name(f".{directory.name}.building-{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    model.write_file(str(building / LM_FILE))
    with open(building / DICTIONARY_FILE, "w", encoding="utf-8") as dictionary:
        for word in sorted(sayable):
            for number, phones in enumerate(sayable[word], start=1):
                entry = word if number == 1 else f"{word}({number})"
                dictionary.write(f"{entry} {phones}\n")
    shutil.rmtree(directory, ignore_errors=True)
    os.replace(building, directory)
    return LineModel(directory)


async def build_in_worker(sentences: list[str], directory: Path) -> LineModel:
    """``build_line_model`` in one of anyio's worker processes."""
    return await anyio.to_process.run_sync(build_line_model, sentences, directory,
                                           cancellable=True)
