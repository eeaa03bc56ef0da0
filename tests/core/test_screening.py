"""The screening list: normal forms, pasted lists, checking a caller's name and the
transfer gate (spec: telephony.md "Screening list")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.screening import (
    MATCH_THRESHOLD,
    MAX_NAME_LENGTH,
    MAX_NAMES_PER_REQUEST,
    ScreeningError,
    ScreeningName,
    Verdict,
    check_name,
    normalise_name,
    parse_pasted_names,
    transfer_allowed,
)


# Each normal form, with spellings of it a caller or an owner may use.
SPELLINGS = {
    "john smith": ["John Smith", "SMITH, John", "  john   smith ", "Mr John Smith",
                   "John Smith Esq."],
    "jose nunez": ["José Núñez"],
    "bronte orsted zoe": ["Zoë Brontë-Ørsted"],
    "renee strasse": ["Renée Straße"],
    "dabrowski lukasz": ["Łukasz Dąbrowski"],
    "aethelred oeuvre": ["Æthelred Œuvre"],
    "obrien sean": ["Seán O'Brien", "Sean O’Brien"],
    "anne jones marie": ["Anne-Marie Jones"],
    "doe jane": ["Dr. Jane Doe"],
    "alan turing": ["Prof Sir Alan Turing"],
    "canon jones mary": ["The Rev. Canon Mary Jones"],
    "grey jane": ["Rt Hon Lady Jane Grey"],
    "acme widgets": ["Acme Widgets Ltd", "Acme Widgets Limited", "ACME WIDGETS L.L.P.",
                     "Acme Widgets GmbH & Co. KG"],
    "smith": ["Smith & Co", "Smith and Co."],
    "marks spencer": ["Marks & Spencer plc"],
    "acme": ["Acme Inc.", "Acme S.A.", "Acme Corp"],
    "acme holdings": ["Acme Holdings LLC"],
}


@pytest.mark.parametrize(("variant", "normal_form"), [
    (variant, normal_form) for normal_form, variants in SPELLINGS.items() for variant in variants
])
def test_spelling_titles_endings_and_order_are_ignored(variant, normal_form):
    assert normalise_name(variant) == normal_form


def test_a_name_that_is_all_titles_keeps_its_words():
    assert normalise_name("Lord") == "lord"
    assert normalise_name("Mr Lord") == "lord mr"


@pytest.mark.parametrize("nothing", ["", "   ", "---", "'''", "&", "\n\t"])
def test_punctuation_alone_has_an_empty_normal_form(nothing):
    assert normalise_name(nothing) == ""


@given(st.text())
def test_normalising_never_raises_and_is_idempotent(text):
    once = normalise_name(text)
    assert normalise_name(once) == once
    assert once == once.strip() and "  " not in once


@given(st.lists(st.text(min_size=1), min_size=1, max_size=5), st.randoms())
def test_normalising_ignores_word_order(words, rng):
    shuffled = list(words)
    rng.shuffle(shuffled)
    assert normalise_name(" ".join(words)) == normalise_name(" ".join(shuffled))


LIST = [normalise_name(name) for name in ("John Smith", "Acme Widgets Ltd", "Müller")]


@pytest.mark.parametrize(
    "caller",
    [
        "John Smith",
        "Mr. John Smith",
        "Smith, John",
        "Jon Smith",
        "John Smyth",
        "Acme Widgets Limited",
        "ACME WIDGETS",
        "Hans Müller",  # the listed surname alone is contained in the caller's name
        "John Smith Esq",
    ],
)
def test_a_close_name_is_a_match(caller):
    assert check_name(caller, LIST) is Verdict.MATCH


@pytest.mark.parametrize("caller", ["Jane Doe", "Mary Smithers", "Acme Gadgets Ltd", "Ann Lee"])
def test_a_different_name_is_clear(caller):
    assert check_name(caller, LIST) is Verdict.CLEAR


@pytest.mark.parametrize(
    "caller",
    [None, "", "   ", "Smith", "Mr Smith", "Dr. Smith", "J. Smith", "J Smith", "---", "Lord"],
)
def test_a_surname_alone_or_nothing_is_not_checked(caller):
    assert check_name(caller, LIST) is Verdict.NOT_CHECKED


def test_a_company_named_in_one_word_with_its_ending_is_checked():
    assert check_name("Acme Ltd", [normalise_name("Acme Limited")]) is Verdict.MATCH
    assert check_name("Zenith Ltd", LIST) is Verdict.CLEAR


def test_a_name_contained_in_a_listed_one_matches_either_way():
    # Conservative on purpose: "Acme Ltd" may be "Acme Widgets Ltd"; a person decides.
    assert check_name("Acme Ltd", LIST) is Verdict.MATCH
    assert check_name("John Smith", [normalise_name("John Smith Jones")]) is Verdict.MATCH
    assert check_name("Acme", LIST) is Verdict.NOT_CHECKED


def test_an_empty_list_clears_every_checkable_name():
    assert check_name("John Smith", []) is Verdict.CLEAR


def test_the_threshold_is_a_parameter():
    assert MATCH_THRESHOLD == 90
    assert check_name("Jon Smith", LIST, threshold=99.5) is Verdict.CLEAR


@given(st.text(), st.lists(st.text(), max_size=5))
def test_checking_never_raises(caller, names):
    assert check_name(caller, [normalise_name(name) for name in names]) in Verdict


@given(st.text(min_size=1))
def test_a_listed_name_matches_itself_when_checkable(name):
    verdict = check_name(name, [normalise_name(name)])
    assert verdict in (Verdict.MATCH, Verdict.NOT_CHECKED)


@pytest.mark.parametrize(
    ("list_exists", "verdict", "allowed"),
    [
        (False, None, True),
        (False, Verdict.MATCH, True),
        (False, Verdict.NOT_CHECKED, True),
        (False, Verdict.CLEAR, True),
        (True, None, False),
        (True, Verdict.MATCH, False),
        (True, Verdict.NOT_CHECKED, False),
        (True, Verdict.CLEAR, True),
    ],
)
def test_only_a_clear_check_puts_a_call_through_while_a_list_exists(list_exists, verdict, allowed):
    assert transfer_allowed(list_exists, verdict) is allowed


def test_pasted_names_one_per_line_blank_lines_skipped():
    pasted = parse_pasted_names("John Smith\n\n  Acme Ltd  \r\n\t\nJane Doe\n")
    assert pasted.added == (
        ScreeningName("John Smith", "john smith"),
        ScreeningName("Acme Ltd", "acme"),
        ScreeningName("Jane Doe", "doe jane"),
    )
    assert (pasted.added_count, pasted.skipped) == (3, 0)


def test_names_already_present_or_repeated_are_skipped():
    present = {normalise_name("John Smith")}
    pasted = parse_pasted_names("Smith, John\nJane Doe\nMrs Jane Doe\n---\nBob Ray", present)
    assert [name.name for name in pasted.added] == ["Jane Doe", "Bob Ray"]
    assert pasted.skipped == 3


def test_each_name_is_cut_at_200_characters():
    long_name = "Bartholomew " * 40
    (name,) = parse_pasted_names(long_name).added
    assert len(name.name) <= MAX_NAME_LENGTH
    assert long_name.startswith(name.name)


@pytest.mark.parametrize("text", ["", "\n\n  \n", " - \n...\n"])
def test_a_paste_without_a_name_is_refused(text):
    with pytest.raises(ScreeningError, match="at least one name") as refused:
        parse_pasted_names(text, ["jane smith"])
    assert refused.value.code == "no_names"


def test_at_most_2000_names_per_request():
    lines = "\n".join(f"Person Number{index}" for index in range(MAX_NAMES_PER_REQUEST))
    assert parse_pasted_names(lines + "\n\n\n").added_count == MAX_NAMES_PER_REQUEST
    with pytest.raises(ScreeningError, match="2000"):
        parse_pasted_names(lines + "\nOne More")


@given(st.text(), st.sets(st.text()).map(lambda names: {normalise_name(n) for n in names}))
def test_pasting_accounts_for_every_line(text, present):
    lines = [line for line in text.splitlines() if line.strip()]
    if not any(normalise_name(line.strip()[:MAX_NAME_LENGTH]) for line in lines):
        with pytest.raises(ScreeningError) as refused:
            parse_pasted_names(text, present)
        assert refused.value.code == "no_names"
        return
    pasted = parse_pasted_names(text, present)
    assert pasted.added_count + pasted.skipped == len(lines)
    forms = [name.normal_form for name in pasted.added]
    assert len(set(forms)) == len(forms) and not set(forms) & present
    assert all(name.normal_form == normalise_name(name.name) for name in pasted.added)
