"""Taking a secret out of text that quotes it: whole, cut, or masked as providers do."""

from __future__ import annotations

import pytest

from core.redaction import redact

KEY = "sk-proj-AbCdEf0123456789GhIjKlMnOpQrStUvWxYz"
MARK = "[key]"


@pytest.mark.parametrize("quoted", [
    KEY,
    "sk-proj-AbCdEf01",  # the start
    "0123456789GhIj",  # a piece of the middle
    "sk-proj-****************************WxYz",  # OpenAI's mask
    "sk-proj-AbC...WxYz",
    "sk-pr…WxYz",
    "****WxYz",
    "sk-proj-****",
    "...UvWxYz",
])
def test_a_quote_of_the_key_is_taken_out(quoted):
    text = f"Incorrect API key provided: {quoted}. You can find your key elsewhere."
    assert redact(text, [KEY], MARK) == (
        f"Incorrect API key provided: {MARK}. You can find your key elsewhere.")


@pytest.mark.parametrize("text", [
    "The model gpt-4o does not exist.",
    "Loading... please wait",
    "the value is a...b",
    "keys look like sk-…",
    "Rate limit reached for requests; try again in 20s.",
])
def test_text_that_quotes_nothing_is_unchanged(text):
    assert redact(text, [KEY], MARK) == text


def test_every_secret_is_taken_out_and_empty_ones_are_ignored():
    text = f"first {KEY} then other-secret-value"
    assert redact(text, [None, "", KEY, "other-secret-value"], MARK) == f"first {MARK} then {MARK}"
