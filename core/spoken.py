"""What a caller says, read as facts, and facts said back as a caller says them.

A recogniser writes speech as words: "monday at ten", "half past two", "the third of
december", "oh seven seven double oh nine". ``read_day`` and ``read_clock`` find the
day and the time of day in such text, relative to a ``now`` the caller of this module
passes (no clock here); days are resolved by ``dateparser`` in the diary's own wall
time. ``read_digits`` finds a telephone number read digit by digit, ``read_reference``
a booking reference spelt out. ``say_when`` is the other way: "Monday the first of
December at ten a.m.", never "2026-12-01".

A bare hour is taken as office hours mean it: "at two" is 2 pm, "at ten" is 10 am.
"""

from __future__ import annotations

__all__ = ["read_clock", "read_day", "read_digits", "read_reference", "say_when",
           "spoken_numbers"]

import datetime as dt
import re

import dateparser

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
          "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}
_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
             "twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth "
             "nineteenth twentieth").split()
_MONTHS = ("January February March April May June July August September October November "
           "December").split()
_WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_NUMBER = {word: n for n, word in enumerate(_UNITS)} | {"oh": 0, "o": 0, "nought": 0}
_ORDINAL = {word: n for n, word in enumerate(_ORDINALS, start=1)}


def _number_word(words: list[str], at: int) -> tuple[int, int] | None:
    """The number spelt at ``words[at]`` ("twenty five", "thirty"), and words used."""
    word = words[at]
    if word in _TENS:
        tens = _TENS[word]
        if at + 1 < len(words) and words[at + 1] in _NUMBER and 0 < _NUMBER[words[at + 1]] < 10:
            return tens + _NUMBER[words[at + 1]], 2
        if at + 1 < len(words) and words[at + 1].removeprefix("twenty-") in _ORDINAL:
            return tens + _ORDINAL[words[at + 1]], 2
        return tens, 1
    if word in _NUMBER and word not in ("o", "oh"):
        return _NUMBER[word], 1
    return None


def spoken_numbers(text: str) -> str:
    """``text`` in lower case with numbers and ordinals in figures: "the third of
    december at half past two" -> "the 3 of december at 2:30"."""
    words = re.findall(r"[a-z0-9:'@.+-]+", text.lower().replace(",", " "))
    out: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in _ORDINAL:
            out.append(str(_ORDINAL[word]))
            index += 1
            continue
        following = words[index + 1] if index + 1 < len(words) else ""
        if word in ("twenty", "thirty") and following in _ORDINAL:
            out.append(str(_TENS[word] + _ORDINAL[following]))
            index += 2
            continue
        spelt = _number_word(words, index)
        if spelt is not None:
            out.append(str(spelt[0]))
            index += spelt[1]
            continue
        ordinal = re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)", word)
        out.append(ordinal.group(1) if ordinal else word)
        index += 1
    text = " ".join(out)
    text = re.sub(r"\bhalf past (\d{1,2})\b", r"\1:30", text)
    text = re.sub(r"\bquarter past (\d{1,2})\b", r"\1:15", text)
    text = re.sub(r"\bquarter to (\d{1,2})\b",
                  lambda m: f"{int(m[1]) - 1 or 12}:45", text)
    text = re.sub(r"\b(\d{1,2}) (\d{2})\b(?= ?(?:am|pm|a\.m\.|p\.m\.|$|o'clock))", r"\1:\2",
                  text)  # "two thirty" -> 2:30
    return re.sub(r"\ba\.m\.|\bp\.m\.", lambda m: m[0].replace(".", ""), text)


_CLOCK = re.compile(r"(?:\bat |\b)(\d{1,2})(?::(\d{2}))?\s*(am|pm|o'clock)?(?=\W|$)")
_PART_OF_DAY = {"morning": dt.time(9, 0), "afternoon": dt.time(14, 0),
                "evening": dt.time(17, 0)}


def read_clock(text: str) -> dt.time | None:
    """The time of day said in ``text``: "at ten", "2:30 pm", "half past two", "noon".
    A number that is part of a date ("the 3 of december") is not a time."""
    spoken = spoken_numbers(text)
    if re.search(r"\b(midday|noon)\b", spoken):
        return dt.time(12, 0)
    for match in _CLOCK.finditer(spoken):
        hour, minute, suffix = int(match[1]), int(match[2] or 0), match[3]
        after = spoken[match.end():match.end() + 12]
        if not suffix and not match[2] and not match[0].startswith("at "):
            continue  # a bare number: a date, a count, a reference
        if re.match(r"\s*(?:of |st|nd|rd|th|" + "|".join(m.lower() for m in _MONTHS) + ")",
                    after):
            continue
        if hour > 23 or minute > 59:
            continue
        if suffix == "pm" and hour < 12:
            hour += 12
        elif suffix == "am" and hour == 12:
            hour = 0
        elif suffix != "am" and hour < 12 and (hour <= 6 or "afternoon" in spoken):
            hour += 12  # office hours: "at two" is the afternoon
        return dt.time(hour, minute)
    return None


def part_of_day(text: str) -> dt.time | None:
    """The start of a part of the day the caller named ("tomorrow afternoon")."""
    return next((start for part, start in _PART_OF_DAY.items() if part in text.lower()), None)


_MONTH_WORDS = "|".join(m.lower() for m in _MONTHS)
# The most exact first: "monday the 1 of december" is the first of December.
_DAY_PHRASES = tuple(re.compile(pattern) for pattern in (
    r"\b\d{4}-\d{2}-\d{2}\b",
    r"\b(?:the )?\d{1,2} (?:of )?(?:" + _MONTH_WORDS + r")\b",
    r"\b(?:" + _MONTH_WORDS + r") (?:the )?\d{1,2}\b",
    r"\b(?:today|tomorrow|the day after tomorrow|day after tomorrow|in \d+ days?|next week|"
    r"(?:next |this )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
))


def read_day(text: str, now: dt.datetime) -> dt.date | None:
    """The day said in ``text``, relative to ``now`` (aware, in the diary's zone): the
    next one to come ("monday", "the third of december", "tomorrow")."""
    spoken = spoken_numbers(text)
    match = next((m for m in (p.search(spoken) for p in _DAY_PHRASES) if m), None)
    if match is None:
        return None
    phrase = re.sub(r"^(?:this|the) |\bof |\bthe ", "", match[0]).replace("next week",
                                                                         "in 7 days")
    base = now.replace(tzinfo=None)
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "future", "DATE_ORDER": "DMY",
                "RETURN_AS_TIMEZONE_AWARE": False}
    found = dateparser.parse(phrase.removeprefix("next "), languages=["en"],
                             settings=settings)  # "next monday" is the coming one
    if found is None:
        return None
    day = found.date()
    if phrase.startswith(tuple(w.lower() for w in _WEEKDAYS)) and day == base.date():
        day += dt.timedelta(days=7)
    return day


_DIGIT_WORDS = {**{w: str(n) for w, n in _NUMBER.items() if n < 10}}


def read_digits(text: str, least: int = 7) -> str | None:
    """A number read digit by digit ("oh seven seven double oh nine ...", "07700 900"),
    as its digits with a leading + kept; None when fewer than ``least`` digits."""
    digits: list[str] = []
    plus = "+" in text
    words = re.findall(r"\+?[a-z0-9]+", text.lower())
    index = 0
    while index < len(words):
        word = words[index].lstrip("+")
        repeat = {"double": 2, "triple": 3}.get(word)
        if repeat and index + 1 < len(words) and words[index + 1] in _DIGIT_WORDS:
            digits.append(_DIGIT_WORDS[words[index + 1]] * repeat)
            index += 2
            continue
        if word in _DIGIT_WORDS:
            digits.append(_DIGIT_WORDS[word])
        elif word.isdigit():
            digits.append(word)
        elif digits and len("".join(digits)) >= least:
            break
        elif word not in ("plus", "is", "it's", "its", "my", "number", "on", "me"):
            digits = []
        index += 1
    joined = "".join(digits)
    if len(joined) < least:
        return None
    return ("+" + joined) if plus or text.lower().split()[:1] == ["plus"] else joined


_LETTER_WORDS = {"alpha": "A", "charlie": "C", "echo": "E", "foxtrot": "F", "hotel": "H",
                 "juliet": "J", "kilo": "K", "mike": "M", "papa": "P", "romeo": "R",
                 "tango": "T", "whiskey": "W", "x-ray": "X", "yankee": "Y"}


def read_reference(text: str, length: int) -> str | None:
    """A booking reference of ``length`` characters said in ``text``: "ACE347", or spelt
    "a c e three four seven"."""
    for word in re.findall(r"[A-Za-z0-9]+", text):
        if len(word) == length and any(c.isdigit() for c in word):
            return word.upper()
    pieces = []
    for word in re.findall(r"[a-z0-9'-]+", text.lower()):
        piece = _LETTER_WORDS.get(word) or _DIGIT_WORDS.get(word)
        if piece is None and len(word) == 1:
            piece = word.upper()
        if piece is None and word.isdigit() and len(word) <= length:
            piece = word
        if piece is None:
            if len(pieces) >= length:
                break
            pieces = []
            continue
        pieces.append(piece)
    joined = "".join(pieces)
    return joined[:length] if len(joined) >= length else None


def _hour_words(clock: dt.time) -> str:
    if clock == dt.time(12, 0):
        return "midday"
    hour = _UNITS[clock.hour % 12 or 12]
    suffix = "a.m." if clock.hour < 12 else "p.m."
    if clock.minute == 0:
        return f"{hour} {suffix}"
    if clock.minute == 30:
        return f"half past {hour} {suffix}"
    if clock.minute == 15:
        return f"quarter past {hour} {suffix}"
    return f"{clock.hour % 12 or 12}:{clock.minute:02d} {suffix}"


def _ordinal_words(day: int) -> str:
    if day <= 20:
        return _ORDINALS[day - 1]
    if day == 30:
        return "thirtieth"
    return ("twenty " if day < 30 else "thirty ") + _ORDINALS[day % 10 - 1]


def say_when(day: dt.date, clock: dt.time | None = None) -> str:
    """"Monday the first of December at ten a.m." (the time left out when None)."""
    words = f"{_WEEKDAYS[day.weekday()]} the {_ordinal_words(day.day)} of {_MONTHS[day.month - 1]}"
    return words if clock is None else f"{words} at {_hour_words(clock)}"
