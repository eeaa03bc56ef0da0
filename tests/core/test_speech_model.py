"""What a line's recogniser expects to hear: spoken words, the corpus, the phones."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.speech_model import (LineText, UnknownPhoneme, cmu_phones, line_sentences,
                               spoken_sentences, spoken_words)


@pytest.mark.parametrize(("written", "said"), [
    ("9:30am", "nine thirty a m"),
    ("at 10am", "at ten a m"),
    ("10:05", "ten oh five"),
    ("12:00", "twelve o'clock"),
    ("I am late", "i am late"),
    ("the 3rd of May", "the third of may"),
    ("21st", "twenty first"),
    ("in 2026", "in twenty twenty six"),
    ("the code is 4521", "the code is four five two one"),
    ("07700 900123", "zero seven seven zero zero nine zero zero one two three"),
    ("45 pounds", "forty five pounds"),
    ("It’s Kerrigan's", "it's kerrigan's"),
])
def test_text_is_spelled_as_it_is_said(written, said):
    assert " ".join(spoken_words(written)) == said


def test_sentences_are_split_where_speech_pauses():
    assert spoken_sentences("We open at 9am. Closed Sundays!\nParking: free; ask us") == [
        "we open at nine a m", "closed sundays", "parking", "free", "ask us"]


@given(st.text())
def test_any_text_gives_lower_case_words_without_digits(text):
    for word in spoken_words(text):
        assert word == word.lower() and not any(c.isdigit() for c in word) and word


def test_a_lines_corpus_holds_its_own_text_and_what_every_call_needs():
    line = LineText("You are the receptionist of Kerrigan Physiotherapy.",
                    ["The car park gate code is 4521."], ["Take a message for the office."])
    sentences = line_sentences(line)
    for own in ("you are the receptionist of kerrigan physiotherapy",
                "the car park gate code is four five two one",
                "take a message for the office"):
        assert own in sentences
    for needed in ("yes please", "thank you goodbye", "tomorrow morning", "half past two",
                   "can i book an appointment"):
        assert needed in sentences
    # the fixed sets outweigh a long Library, so they are never drowned
    assert sentences.count("yes please") > sentences.count("take a message for the office")


# eSpeak NG's mnemonics of some words a line hears, named by the word they spell.
@pytest.mark.parametrize(("mnemonics", "phones"), [
    pytest.param("T'aNk", "TH AE NG K", id="thank"),
    pytest.param("t@m'A:roU", "T AH M AA R OW", id="tomorrow"),
    pytest.param("a#p'OIntm@nt", "AH P OY N T M AH N T", id="appointment"),
    pytest.param("k'ErIg@n", "K EH R IH G AH N", id="kerrigan"),
    pytest.param("dZ'VdZ", "JH AH JH", id="judge"),
    pytest.param("b'V?n-", "B AH T AH N", id="button"),
    pytest.param("n'i@3", "N IH R", id="near"),
    pytest.param("f'aI3", "F AY ER", id="fire"),
])
def test_espeak_mnemonics_become_cmu_phones(mnemonics, phones):
    assert " ".join(cmu_phones(mnemonics)) == phones


def test_an_unmapped_mnemonic_is_refused_not_guessed():
    with pytest.raises(UnknownPhoneme):
        cmu_phones("k'Y")
