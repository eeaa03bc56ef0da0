"""The opening of every call (spec: telephony.md "Opening of every call")."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.voice import RECORDING_SENTENCE, STANDARD_NOTICE, compose_opening, notice_in_force


def test_greeting_then_the_standard_notice_when_the_line_has_none():
    assert compose_opening("Good morning, Hill Surgery.", None, recording=False) == (
        f"Good morning, Hill Surgery. {STANDARD_NOTICE}")


def test_a_greeting_that_asks_is_not_followed_by_the_same_question():
    greeting = "Hello, Riverside Physiotherapy, how can I help?"
    opening = compose_opening(greeting, None, recording=False)
    assert opening == (f"{greeting} You are speaking with an automated assistant. What you "
                       "say is written down, and staff may read it. You can ask for a person "
                       "at any time.")
    assert opening.lower().count("how can i help") == 1


def test_a_greeting_that_asks_keeps_the_recording_sentence_and_every_statement():
    opening = compose_opening("Riverside, who's calling?", None, recording=True)
    assert opening == ("Riverside, who's calling? You are speaking with an automated "
                       "assistant. This call is recorded. What you say is written down, and "
                       "staff may read it. You can ask for a person at any time.")


def test_a_question_closed_by_a_quote_or_bracket_still_asks():
    for greeting in ('Riverside, "how can I help?"', "Riverside (how can we help?)"):
        assert not compose_opening(greeting, None, recording=False).endswith("help?")


def test_a_greeting_that_does_not_ask_is_followed_by_the_whole_standard_notice():
    for greeting in ("Hello, Riverside Physiotherapy.", "Is it? No, it is Riverside."):
        opening = compose_opening(greeting, None, recording=False)
        assert opening == f"{greeting} {STANDARD_NOTICE}"


def test_the_lines_own_notice_is_said_as_written_after_a_greeting_that_asks():
    opening = compose_opening("Hello, how can I help?", "A robot answers. Any questions?",
                              recording=False)
    assert opening == "Hello, how can I help? A robot answers. Any questions?"


def test_the_standard_notice_says_what_the_spec_requires():
    words = STANDARD_NOTICE.lower()
    assert "automated assistant" in words
    assert "written down" in words and "staff may read" in words
    assert "ask for a person" in words
    assert words.endswith("how can i help?")


def test_recording_sentence_stands_after_the_first_sentence_of_the_standard_notice():
    opening = compose_opening(None, None, recording=True)
    assert opening == ("You are speaking with an automated assistant. This call is recorded. "
                       "What you say is written down, and staff may read it. You can ask for a "
                       "person at any time. How can I help?")


def test_recording_sentence_follows_the_first_sentence_of_the_lines_own_notice():
    opening = compose_opening("Hello.", "Bots answer here! Speak after the tone.",
                              recording=True)
    assert opening == "Hello. Bots answer here! This call is recorded. Speak after the tone."


def test_a_full_stop_inside_a_sentence_does_not_end_it():
    opening = compose_opening(None, "Open 8.30 to 5, e.g. weekdays. Ask away.", recording=True)
    assert opening == "Open 8.30 to 5, e.g. weekdays. This call is recorded. Ask away."


def test_a_notice_of_one_unfinished_sentence_gets_its_full_stop():
    assert compose_opening(None, "You reach a machine", recording=True) == (
        "You reach a machine. This call is recorded.")


def test_no_recording_sentence_when_the_line_does_not_record():
    assert RECORDING_SENTENCE not in compose_opening("Hi.", "A notice. Second.", recording=False)


def test_blank_notice_and_greeting_count_as_absent():
    assert notice_in_force("   ") == STANDARD_NOTICE
    assert compose_opening("  ", "", recording=False) == STANDARD_NOTICE


sentence = st.from_regex(r"[A-Z][A-Za-z ,]{0,30}[.!?]", fullmatch=True)


@given(greeting=st.one_of(st.none(), sentence),
       sentences=st.lists(sentence, min_size=1, max_size=4))
def test_recording_sentence_appears_once_right_after_the_first_sentence(greeting, sentences):
    notice = " ".join(sentences)
    opening = compose_opening(greeting, notice, recording=True)
    normalised_first = " ".join(sentences[0].split())
    greeting_length = len(" ".join((greeting or "").split()))
    assert opening.count(RECORDING_SENTENCE) == 1
    after_first = opening.index(normalised_first, greeting_length) + len(normalised_first)
    assert opening[after_first:].startswith(f" {RECORDING_SENTENCE}")
    # Nothing of the notice is lost or reordered.
    assert opening.replace(f" {RECORDING_SENTENCE}", "").endswith(" ".join(notice.split()))


# -- an answer cut into sentences for synthesis

from core.voice import MAX_SENTENCE_CHARS, SentenceSplitter  # noqa: E402


def test_sentences_come_out_as_soon_as_they_are_complete():
    splitter = SentenceSplitter()
    assert splitter.feed("We open at 8.30") == []
    assert splitter.feed(" on weekdays. We clo") == ["We open at 8.30 on weekdays."]
    assert splitter.feed("se at five!\nAnything else") == ["We close at five!"]
    assert splitter.flush() == "Anything else"
    assert splitter.flush() == ""


def test_a_long_run_of_stops_is_read_in_one_pass():
    # One piece of marks with no space after them, as a tool's text or an upstream's
    # delta may be: a pattern tried from each mark would scan the rest from each.
    splitter = SentenceSplitter()
    pieces = splitter.feed("." * 256_000)
    assert "".join(pieces) + splitter.flush() == "." * 256_000


def test_a_long_run_without_an_end_is_cut_at_a_space():
    splitter = SentenceSplitter()
    pieces = splitter.feed("word " * 100)
    assert pieces and all(len(piece) <= MAX_SENTENCE_CHARS for piece in pieces)


@given(st.lists(st.text(alphabet="ab .!?\n", max_size=12), max_size=20))
def test_splitting_keeps_every_word_in_order_however_the_text_arrives(pieces):
    splitter = SentenceSplitter()
    out = [s for piece in pieces for s in splitter.feed(piece)]
    out.append(splitter.flush())
    assert " ".join(" ".join(out).split()) == " ".join("".join(pieces).split())
