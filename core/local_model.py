"""The built-in ``local`` model: answers without any network, by rules and extraction.

What it is: not a language model. It lets a fresh install with no upstream answer
from its Libraries and use its tools, through the same pipeline as a real model
(DESIGN.md "Real components"). Given one turn — the question, the retrieved passages,
the agent's tools, and the results of tools already run this turn — ``respond`` does
the first of these that applies:

1. A tool ran this turn: say what it returned (or, refused or failed, say so and, where
   the refusal suggests it, offer to take a message).
2. The question matches an intent rule and the agent has a tool for it — put through
   to a person, book, take a message, tell the time, end the call on a goodbye — call
   that tool, filling the
   arguments it can parse from the question; when a required one cannot be found, ask
   for it instead.
3. Otherwise answer extractively: the passage sentences sharing the most (rarity
   weighted) words with the question, each followed by its ``[n]`` citation; when no
   sentence shares enough, say plainly that the documents do not hold it.

On a telephone call (the caller passes ``now``) the second step is a conversation
over several turns instead, rebuilt each turn from the history (``core.call_dialogue``).

Pure: no clock, no I/O. Token counts for usage are word counts (``word_count``).
"""

from __future__ import annotations

__all__ = ["NOT_FOUND_TEXT", "LocalAnswer", "LocalToolCall", "LocalTurn", "respond",
           "word_count"]

import datetime as dt
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from core.call_dialogue import DIALOGUE_TOOLS, cannot_do, next_step
from core.local_replies import LocalAnswer, LocalToolCall
from core.passages import Passage
from core.pipeline import ToolFinished, ToolSpec, ToolStatus
from core.records import frozen

NOT_FOUND_TEXT = "I could not find that in the documents I can read."
_MAX_SENTENCES = 3
_MIN_COVERAGE = 0.34  # share of the question's (weighted) words a sentence must hold
_MAX_SENTENCE_CHARS = 400

_STOPWORDS = frozenset("""
a about above after again all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from
further had has have having he her here hers him his how i if in into is it its itself
just me more most my no nor not of off on once only or other our ours out over own
please same she should so some such tell than that the their them then there these
they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours know want like get let us give
""".split())


@frozen
class LocalTurn:
    question: str
    passages: Sequence[Passage] = ()
    tools: Sequence[ToolSpec] = ()
    #: the tool calls already made this turn, oldest first
    tool_results: Sequence[ToolFinished] = ()
    #: the conversation so far, oldest first ({"role", "content"} mappings)
    history: Sequence[Mapping[str, Any]] = ()
    #: on a call: the present instant in the diary's zone, which makes it a conversation
    now: dt.datetime | None = None
    #: on a call: whether the caller's number came with the call
    caller_number_known: bool = False


def word_count(text: str) -> int:
    return len(text.split())


def respond(turn: LocalTurn) -> LocalAnswer | LocalToolCall:
    """What the local model says or does next in ``turn``."""
    if turn.now is not None:
        return _on_call(turn)
    if turn.tool_results:
        return LocalAnswer(_after_tool(turn.tool_results[-1]))
    intended = _intended_tool(turn.question, turn.tools)
    if intended is not None:
        return _call_or_ask(intended, turn.question)
    return LocalAnswer(_extract(turn.question, turn.passages))


_OFFER_MESSAGE = " I can take a message for you instead, if you like."


def _on_call(turn: LocalTurn) -> LocalAnswer | LocalToolCall:
    assert turn.now is not None
    step = next_step(turn.history, turn.question, turn.tools, turn.tool_results, turn.now,
                     caller_number_known=turn.caller_number_known,
                     answer=lambda question: _extract(question, turn.passages))
    if step is not None:
        return step
    if turn.tool_results:
        return LocalAnswer(_after_tool(turn.tool_results[-1]))
    # A tool of the agent's own ("book_visit") is asked for as outside a call.
    own_tools = [tool for tool in turn.tools if tool.name not in DIALOGUE_TOOLS]
    intended = _intended_tool(turn.question, own_tools)
    if intended is not None:
        return _call_or_ask(intended, turn.question)
    answer = _extract(turn.question, turn.passages)
    if answer != NOT_FOUND_TEXT:
        return LocalAnswer(answer)
    answer = cannot_do(turn.question, turn.tools) or NOT_FOUND_TEXT
    if any(t.name == "take_message" for t in turn.tools):
        answer += _OFFER_MESSAGE
    return LocalAnswer(answer)


# -- 1. after a tool --------------------------------------------------------------------

_READABLE_KEYS = ("text", "message", "answer", "result", "summary", "status")


def _after_tool(result: ToolFinished) -> str:
    if result.status is ToolStatus.OK:
        return _readable(result.content)
    if "take a message" in result.content:
        return "I'm sorry, I can't do that right now. I can take a message instead, if you like."
    return "I'm sorry, that did not work just now."


def _readable(content: str) -> str:
    """A tool's result as a sentence: its text field, else its scalar fields."""
    try:
        value = json.loads(content)
    except ValueError:
        return content.strip()[:500] or "Done."
    if isinstance(value, dict):
        for key in _READABLE_KEYS:
            if isinstance(value.get(key), str) and value[key].strip():
                return value[key].strip()
        pairs = [f"{k.replace('_', ' ')}: {v}" for k, v in value.items()
                 if isinstance(v, (str, int, float, bool))][:6]
        return "; ".join(pairs) + "." if pairs else "Done."
    return str(value)[:500]


# -- 2. intent rules ----------------------------------------------------------------------


@frozen
class _Intent:
    #: words or phrases in the question that signal the intent
    phrases: tuple[str, ...]
    #: words in a tool's name or description that make it the tool for the intent
    tool_words: tuple[str, ...]


# In order: asking for a person wins over the rest ("put me through to leave a message").
_INTENTS = (
    _Intent(("speak to a person", "talk to a person", "speak to someone", "talk to someone",
             "speak to a human", "real person", "human", "operator", "transfer",
             "put me through", "receptionist"), ("transfer", "put through", "put_through",
                                                 "forward")),
    _Intent(("book", "booking", "appointment", "reserve", "reservation", "schedule"),
            ("book", "appointment", "reserv", "diary")),
    _Intent(("message", "call me back", "call back", "leave a note", "pass on"),
            ("message",)),
    _Intent(("what time", "the time", "time is it", "current time", "clock"),
            ("time", "clock")),
    # Last: a goodbye inside another request ("book it, thanks, bye") is that request.
    _Intent(("goodbye", "good bye", "bye", "bye bye", "that's all", "that is all",
             "hang up"), ("end_call", "hang up", "end the call")),
)


def _normal(text: str) -> str:
    return " " + " ".join(re.findall(r"[\w'+/:@.-]+", text.lower())) + " "


def _mentions(text: str, phrase: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(phrase) + r"(?![\w])", text) is not None


def _intended_tool(question: str, tools: Sequence[ToolSpec]) -> ToolSpec | None:
    asked = _normal(question)
    for intent in _INTENTS:
        if not any(_mentions(asked, phrase) for phrase in intent.phrases):
            continue
        by_name = [t for t in tools if any(w in t.name.lower() for w in intent.tool_words)]
        by_text = [t for t in tools if any(w in t.description.lower() for w in intent.tool_words)]
        if by_name or by_text:
            return (by_name or by_text)[0]
    return None


_TIMEZONE = re.compile(r"\b(UTC|GMT|[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_+-]+)+)\b")
# An address starts where its run of address characters starts (else a long run is
# scanned again from each of its characters).
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"(?<![\w+])\+?\d(?:[\s().-]?\d){6,14}(?!\d)")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_CLOCK = re.compile(r"\b(?:[01]?\d|2[0-3]):[0-5]\d\b|\b(?:1[0-2]|0?[1-9])\s?(?:am|pm)\b",
                    re.IGNORECASE)
_NAME = re.compile(r"\b(?:my name is|this is|i am|i'm)\s+([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)")


def _found(pattern: re.Pattern[str], question: str, group: int = 0) -> str | None:
    match = pattern.search(question)
    return match.group(group).strip() if match else None


def _phone(question: str) -> str | None:
    """A telephone number, not to be confused with a date written with dashes."""
    for match in _PHONE.finditer(question):
        if not _DATE.search(match.group(0)):
            return match.group(0).strip()
    return None


# Words of an argument's name -> how to find its value in the question. The first
# row with a word in the name decides: "caller_name" is a name, "caller" alone a number.
_EXTRACTORS: tuple[tuple[tuple[str, ...], Any], ...] = (
    (("timezone", "tz", "zone"), lambda q: _found(_TIMEZONE, q)),
    (("email",), lambda q: _found(_EMAIL, q)),
    (("name",), lambda q: _found(_NAME, q, 1)),
    (("phone", "number", "caller", "mobile"), _phone),
    (("date", "day"), lambda q: _found(_DATE, q)),
    (("time", "start", "when"), lambda q: _found(_CLOCK, q)),
    (("message", "text", "content", "note", "body", "reason", "summary", "subject",
      "details", "query", "question"), lambda q: q.strip()),
)


def _argument(name: str, schema: dict[str, Any], question: str) -> Any:
    options = schema.get("enum")
    if isinstance(options, list):
        asked = _normal(question)
        return next((o for o in options if isinstance(o, str) and _mentions(asked, o.lower())),
                    None)
    if schema.get("type") not in (None, "string"):
        return None
    words = set(re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower().replace("-", "_").split("_"))
    for names, extract in _EXTRACTORS:
        if words & set(names):
            return extract(question)
    return None


def _call_or_ask(tool: ToolSpec, question: str) -> LocalAnswer | LocalToolCall:
    properties = tool.parameters.get("properties") or {}
    arguments = {}
    for name, schema in properties.items():
        value = _argument(name, schema if isinstance(schema, dict) else {}, question)
        if value is not None:
            arguments[name] = value
    missing = [n for n in tool.parameters.get("required") or () if n not in arguments]
    if missing:
        wanted = properties.get(missing[0]) or {}
        label = wanted.get("description") or missing[0].replace("_", " ")
        return LocalAnswer(f"I can do that. First, what is the {label.rstrip('.').lower()}?")
    return LocalToolCall(tool.name, arguments)


# -- 3. extractive answer -------------------------------------------------------------------


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _terms(text: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"\w+", text.lower())
            if w not in _STOPWORDS and (len(w) > 1 or w.isdigit())}


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [" ".join(p.split())[:_MAX_SENTENCE_CHARS] for p in parts if p.strip()]


def _extract(question: str, passages: Sequence[Passage]) -> str:
    wanted = _terms(question)
    candidates = [(number, order, sentence, _terms(sentence))
                  for number, passage in enumerate(passages, start=1)
                  for order, sentence in enumerate(_sentences(passage.text))]
    if not wanted or not candidates:
        return NOT_FOUND_TEXT
    # Rare words say more about a match than common ones (inverse sentence frequency).
    weight = {t: math.log(1 + len(candidates) / (1 + sum(t in c[3] for c in candidates)))
              for t in wanted}
    total = sum(weight.values())
    scored = [(sum(weight[t] for t in wanted & terms) / total, number, order, sentence)
              for number, order, sentence, terms in candidates]
    best = max(score for score, *_ in scored)
    if best < _MIN_COVERAGE:
        return NOT_FOUND_TEXT
    chosen = sorted(scored, key=lambda s: (-s[0], s[1], s[2]))[:_MAX_SENTENCES]
    chosen = [s for s in chosen if s[0] >= max(_MIN_COVERAGE, best / 2)]
    chosen.sort(key=lambda s: (s[1], s[2]))  # read in document order
    return " ".join(_cited(sentence, number) for _, number, _, sentence in chosen)


def _cited(sentence: str, number: int) -> str:
    """``sentence`` with its marker before the closing stop: "It opens at 8 [1]."."""
    body, stop = (sentence[:-1], sentence[-1]) if sentence[-1:] in ".!?" else (sentence, ".")
    return f"{body.rstrip()} [{number}]{stop}"
