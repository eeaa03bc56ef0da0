"""Text as a recogniser hears it.

A recogniser's dictionary holds words, not digits: "9:30" is heard as "nine thirty",
"2026" as "twenty twenty six", "3rd" as "third", "10am" as "ten a m". Numbers are
spelled with ``num2words`` (a maintained library, not rules of our own).
"""

from __future__ import annotations

__all__ = ["spoken_sentences", "spoken_words"]

import re

from num2words import num2words

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n+")
_TOKEN = re.compile(r"\d{1,2}:\d{2}|\d+(?:st|nd|rd|th)\b|\d+|[a-z]+(?:'[a-z]+)?")
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})")
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
#: Up to this many digits a number is said as one ("forty five", "one hundred and
#: fifty"); longer runs are codes, references and telephone numbers, said digit by digit.
_LONGEST_NUMBER = 3


def _number(digits: str) -> list[str]:
    value = int(digits)
    if len(digits) == 4 and 1100 <= value <= 2099:
        return _split(num2words(value, to="year"))
    if len(digits) > _LONGEST_NUMBER or len(digits) > 1 and digits.startswith("0"):
        return [_split(num2words(int(d)))[0] for d in digits]
    return _split(num2words(value))


def _split(spelled: str) -> list[str]:
    return re.findall(r"[a-z]+", spelled.lower())


def _clock(hours: str, minutes: str) -> list[str]:
    if minutes == "00":
        return _number(hours) + ["o'clock"]
    if minutes.startswith("0"):
        return _number(hours) + ["oh"] + _number(minutes[1])
    return _number(hours) + _number(minutes)


def spoken_words(text: str) -> list[str]:
    """The words of ``text`` as they would be said, lower case."""
    words: list[str] = []
    after_number = False
    for token in _TOKEN.findall(text.lower().replace("\u2019", "'")):
        if clock := _CLOCK.fullmatch(token):
            words += _clock(*clock.groups())
        elif ordinal := _ORDINAL.fullmatch(token):
            words += _split(num2words(int(ordinal.group(1)), to="ordinal"))
        elif token.isdigit():
            words += _number(token)
        elif token in ("am", "pm") and after_number:
            words += [token[0], "m"]  # "10am" is said "ten a m"; "I am" keeps its word
        else:
            words.append(token)
        after_number = token[0].isdigit()
    return words


def spoken_sentences(text: str) -> list[str]:
    """``text`` as sentences of spoken words, one string each, empty ones left out."""
    spaced = re.sub(r"(\d)(am|pm)\b", r"\1 \2", text, flags=re.IGNORECASE)
    sentences = (" ".join(spoken_words(part)) for part in _SENTENCE_END.split(spaced))
    return [s for s in sentences if s]
