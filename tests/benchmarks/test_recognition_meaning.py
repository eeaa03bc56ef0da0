"""The recognition benchmark judges meaning by what the local model does with the words."""

from __future__ import annotations

import pytest

from benchmarks.recognition import HELD_OUT, Said, _meaning, _passages
from core.speech_model import spoken_words


@pytest.fixture(scope="module")
def passages():
    return _passages()


@pytest.mark.parametrize("said", HELD_OUT, ids=lambda said: said.text)
def test_a_perfect_transcript_keeps_the_meaning(said: Said, passages) -> None:
    assert _meaning(said, " ".join(spoken_words(said.text)), passages)


@pytest.mark.parametrize(("said", "heard"), [
    (Said("Yes please.", "confirm"), "yeah"),
    (Said("That's right.", "confirm"), "yes that's right"),
    (Said("Tomorrow at ten.", "when"), "tomorrow at ten o'clock"),
    (Said("When are you open on Saturdays?"), "when are you open on saturday"),
])
def test_other_words_for_the_same_answer_keep_it(said: Said, heard: str, passages) -> None:
    assert _meaning(said, heard, passages)


@pytest.mark.parametrize(("said", "heard"), [
    (Said("Yes please.", "confirm"), "the at"),
    (Said("No, thank you.", "confirm"), "yes thank you"),
    (Said("Tomorrow at ten.", "when"), "tomorrow at nine"),
    (Said("Half past two on Monday.", "when"), "half past two on sunday"),
    (Said("My reference is four seven two nine one three.", "reference"),
     "my reference is four seven two nine one two"),
    (Said("My name is Sarah Jones.", "name"), "my name is emma hill"),
    (Said("My number is oh seven seven double oh one two three four five six.", "number"),
     "my number is oh seven seven double oh one two three four five"),
    (Said("Is parking free?"), "the nineteenth week"),
])
def test_a_different_answer_loses_it(said: Said, heard: str, passages) -> None:
    assert not _meaning(said, heard, passages)
