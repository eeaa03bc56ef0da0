"""The built-in ``local`` model on a telephone call: a receptionist's conversation.

The local model keeps no state between turns: each turn it reads the conversation it is
given again, oldest first, and rebuilds what the call is about — the task in hand
(book, change, cancel, a message, a transfer), what the caller already said for it, and
what it asked last. It asks for one thing at a time, says back what it heard before it
books, changes or cancels, and calls the call's tools (``app.diary.call_tools``) once
it has what each one needs. What a tool answered is read from the assistant's turn
that followed: a question there ("Which would suit you?") keeps the task open.

Pure: the caller passes ``now`` (aware, in the diary's zone); no clock, no I/O.
"""

from __future__ import annotations

__all__ = ["DIALOGUE_TOOLS", "FAREWELL_TEXT", "cannot_do", "next_step"]

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace
from typing import Any

from core.local_replies import LocalAnswer, LocalToolCall
from core.pipeline import ToolFinished, ToolSpec, ToolStatus
from core.records import frozen
from core.spoken import (
    part_of_day,
    read_clock,
    read_day,
    read_digits,
    read_reference,
    say_when,
)

FAREWELL_TEXT = "Thank you for calling. Goodbye."
REFERENCE_LENGTH = 6
DEFAULT_SUBJECT = "Appointment"

_ASK = {
    "when": "What day and time would suit you?",
    "time": "What time on {day} would suit you?",
    "name": "May I have your name, please?",
    "number": "What number can we call you back on?",
    "message": "What would you like me to pass on?",
    "reference": "What is your booking reference?",
    "offer": "Shall I offer some free times?",
}
_CAUGHT = "Sorry, I didn't catch that. "
_READ_AGAIN = "Could you read me the reference again?"
_QUESTION = re.compile(r"^\W*(what|when|where|why|how|which|who|do|does|are|is|can you|"
                       r"could you|have you)\b|\?\s*$", re.I)


# The replies in the dialogue's own words: something said, a tool called.
Say = LocalAnswer
Call = LocalToolCall


@frozen
class _Task:
    kind: str  # book | change | cancel | message | transfer
    slots: Mapping[str, Any] = field(default_factory=dict)
    #: what was asked last: a slot, "confirm", "offer" or "pick"
    asked: str | None = None
    offered: tuple[tuple[dt.date, dt.time], ...] = ()

    def with_slots(self, **slots: Any) -> _Task:
        return replace(self, slots={**self.slots, **{k: v for k, v in slots.items()
                                                       if v is not None}})


# -- what the caller said ---------------------------------------------------------------

_KINDS = (
    ("goodbye", r"\b(good ?bye|bye|that's all|that is all|nothing else|no,? thanks?|"
                r"no thank you)\b"),
    ("transfer", r"\b(speak|talk) to (a |an |the )?(person|someone|human|somebody|"
                 r"receptionist|operator)|\bput me through\b|\btransfer\b|\breal person\b"),
    ("cancel", r"\bcancel\b"),
    # The first verb of a line is enough: from it, the rest of the line is searched once.
    ("change", r"(?m)^(?>.*?\b(?:change|move|reschedule|rearrange)\b).*\b(?:appointment|booking|it)\b"),
    ("message", r"\b(message|call me back|call back|leave a note|pass on)\b"),
    ("book", r"\b(book|appointment|make a booking|reserve|schedule)\b"),
)
_YES = re.compile(r"^\W*(yes|yeah|yep|yup|sure|please|ok|okay|correct|that's right|"
                  r"that is right|go ahead|right|fine|lovely|perfect)\b", re.I)
_NO = re.compile(r"^\W*(no|nope|not really|wrong|that's wrong)\b", re.I)
_NAME_LEAD = re.compile(r"^\W*(?:(?:yes|yeah|ok|sure)\W+)?(?:my name is|my name's|the name is|"
                        r"name's|it's|it is|this is|i am|i'm)\s+", re.I)
_NAMED = re.compile(r"\b(?:my name is|my name's|this is|i am|i'm)\s+([A-Za-z][\w'-]+"
                    r"(?:\s+[A-Za-z][\w'-]+)?)", re.I)
_NOT_NAMES = frozenset("calling ringing phoning looking hoping wanting trying just "
                       "here after interested sorry afraid not".split())
_SUBJECT = re.compile(r"\b(?:book(?: me)?(?: in)?(?: for)?|appointment for|booking for|"
                      r"come in for|in for)\s+((?:a|an|my|the)\s+)?"
                      r"([a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3})",
                      re.I)
_SUBJECT_END = re.compile(r"(?<!\s)\s+(?:on|at|for|this|next|tomorrow|today|please|with|in)\b.*$")
_NOT_SUBJECTS = frozenset({"appointment", "an appointment", "a booking", "booking", "me",
                           "it", "one", "a time", "some time"})
_ORDINAL_PICK = (("first", 0), ("1st", 0), ("earliest", 0), ("second", 1), ("2nd", 1),
                 ("middle", 1), ("third", 2), ("3rd", 2), ("last", -1))


def _kind(text: str) -> str | None:
    lowered = text.lower()
    return next((kind for kind, pattern in _KINDS if re.search(pattern, lowered)), None)


def _name(text: str, asked: bool) -> str | None:
    """The caller's name: after "my name is" anywhere; when it was asked for, what
    they said, less the lead-in words."""
    named = _NAMED.search(text)
    if named and named[1].split()[0].lower() not in _NOT_NAMES:
        return named[1].title()
    if not asked:
        return None
    words = re.findall(r"[A-Za-z][\w'-]*", _NAME_LEAD.sub("", text.strip()))[:4]
    if not words or words[0].lower() in _NOT_NAMES:
        return None  # "I'm calling about ..." is not a name
    return " ".join(w.capitalize() for w in words)


def _subject(text: str) -> str | None:
    match = _SUBJECT.search(text)
    if match is None:
        return None
    subject = _SUBJECT_END.sub("", match[2]).strip()
    if not subject or subject.lower() in _NOT_SUBJECTS or read_day(subject, _EPOCH):
        return None
    return subject[0].upper() + subject[1:]


_EPOCH = dt.datetime(2000, 1, 1)


def _when(text: str, now: dt.datetime, offered: Sequence[tuple[dt.date, dt.time]]) -> dict:
    """The day and time said in ``text``, or picked from the times just offered."""
    lowered = text.lower()
    if offered:
        for word, index in _ORDINAL_PICK:
            if re.search(rf"\b{word}\b", lowered):
                day, clock = offered[index]
                return {"day": day, "clock": clock}
    day, clock = read_day(text, now), read_clock(text)
    if offered and clock is not None:
        same = [o for o in offered if o[1] == clock and (day is None or o[0] == day)]
        if same:
            return {"day": same[0][0], "clock": clock}
    if clock is None and day is not None and part_of_day(text) is not None:
        return {"day": day, "part": part_of_day(text)}
    return {"day": day, "clock": clock}


def _offered(text: str, now: dt.datetime) -> tuple[tuple[dt.date, dt.time], ...]:
    """The times an offer said ("I can offer Monday 1 December at 9 am, ... or ...")."""
    start = text.find("offer ")
    if start < 0:
        return ()
    items = re.split(r",\s*|(?<!\s)\s+or\s+", text[start + 6:].split("?")[0].split(". ")[0])
    times = []
    for item in items:
        day, clock = read_day(item, now), read_clock(item)
        if day is not None and clock is not None:
            times.append((day, clock))
    return tuple(times)


# -- the task's next step ------------------------------------------------------------------

_NEEDS = {"book": ("when", "name"), "change": ("reference", "when"),
          "cancel": ("reference",), "message": ("name", "number", "message"),
          # the put-through tool asks for the caller's full name itself when screening
          # needs it: no question the gate does not need
          "transfer": ()}
_TOOL = {"book": "book_appointment", "change": "change_appointment",
         "cancel": "cancel_appointment", "message": "take_message", "transfer": "put_through"}
_CONFIRMED = ("book", "change", "cancel")
#: The tools this dialogue drives itself; any other tool of an agent is called by the
#: single-turn rules of ``core.local_model``.
DIALOGUE_TOOLS = frozenset(_TOOL.values()) | {"offer_times", "end_call"}
#: Each task as what a line cannot do when its agent has not been given the tool.
_CANNOT = {"book": "book appointments", "change": "change appointments",
           "cancel": "cancel appointments", "message": "take messages",
           "transfer": "put you through to a person"}


def _fill(task: _Task, text: str, now: dt.datetime, caller_number_known: bool) -> _Task:
    """``task`` with what ``text`` says for it."""
    asked = task.asked
    slots: dict[str, Any] = {}
    # The answer to "May I have your name?" is the name: a name misheard as a date
    # ("may the eighth") must not move the time the caller chose. The read-back before
    # booking lets them correct either.
    when = _when(text, now, task.offered) if asked != "name" else {}
    if when.get("day") is not None:
        slots["day"] = when["day"]
        slots.pop("clock", None)
        task = replace(task, slots={k: v for k, v in task.slots.items() if k != "clock"})
    if when.get("clock") is not None:
        slots["clock"] = when["clock"]
    if task.kind in ("change", "cancel"):
        slots["reference"] = read_reference(text, REFERENCE_LENGTH)
    if task.kind == "book" and "subject" not in task.slots:
        slots["subject"] = _subject(text)
    if task.kind == "message" and asked == "message":
        slots["message"] = text.strip()
    if task.kind == "message":
        slots["number"] = read_digits(text)
        if asked == "number" and slots["number"] is None and re.search(
                r"\b(this|same) (one|number)\b", text.lower()) and caller_number_known:
            slots["number"] = "this number"
    slots["name"] = _name(text, asked == "name")
    return task.with_slots(**slots)


def _missing(task: _Task) -> str | None:
    for need in _NEEDS[task.kind]:
        if need == "when":
            if task.slots.get("day") is None:
                return "when"
            if task.slots.get("clock") is None:
                return "time"
        elif not task.slots.get(need):
            return need
    return None


def _confirmation(task: _Task) -> str:
    slots = task.slots
    if task.kind == "book":
        return (f"Shall I book {say_when(slots['day'], slots['clock'])} for "
                f"{slots['name']}?")
    reference = " ".join(slots["reference"])
    if task.kind == "change":
        return f"Shall I move booking {reference} to {say_when(slots['day'], slots['clock'])}?"
    return f"Shall I cancel booking {reference}?"


def _arguments(task: _Task) -> dict[str, Any]:
    slots = task.slots
    arguments: dict[str, Any] = {}
    if "day" in slots and task.kind in ("book", "change"):
        arguments["date"] = slots["day"].isoformat()
        arguments["time"] = slots["clock"].strftime("%H:%M")
    if slots.get("name"):
        arguments["caller_name"] = slots["name"]
    if task.kind in ("change", "cancel"):
        arguments["reference"] = slots["reference"]
    if task.kind == "book":
        arguments["subject"] = slots.get("subject") or DEFAULT_SUBJECT
    if task.kind == "message":
        arguments["subject"] = "Message taken on a call"
        arguments["message"] = slots["message"]
        if slots["number"] != "this number":
            arguments["callback_number"] = slots["number"]
    return arguments


@frozen
class _Context:
    now: dt.datetime
    tools: frozenset[str]
    caller_number_known: bool = False
    #: the answer from the documents to a question asked in the middle of a task
    answer: Callable[[str], str] = lambda question: ""


def _advance(task: _Task, text: str, context: _Context) -> tuple[_Task | None, Say | Call]:
    """The task after the caller said ``text``, and what to say or do next."""
    if task.asked == "confirm":
        if _YES.search(text):
            return task, Call(_TOOL[task.kind], _arguments(task))
        if _NO.search(text):
            corrected = _fill(replace(task, asked=None), text, context.now,
                              context.caller_number_known)
            if corrected.slots == task.slots:
                cleared = {k: v for k, v in task.slots.items() if k not in ("day", "clock")}
                task = replace(task, slots=cleared, asked="when")
                return task, Say("Sorry about that. " + _ASK["when"])
            task = corrected
    elif task.asked == "offer" and _YES.search(text) and "offer_times" in context.tools:
        day = task.slots.get("day")
        return replace(task, asked="pick"), Call(
            "offer_times", {"date": day.isoformat()} if day else {})
    else:
        filled = _fill(task, text, context.now, context.caller_number_known)
        if filled.slots == task.slots and task.asked and _QUESTION.search(text):
            again = _ASK.get(task.asked, _confirmation(task) if task.asked == "confirm" else "")
            again = again.format(day=say_when(task.slots["day"]) if "day" in task.slots else "")
            return task, Say(f"{context.answer(text)} {again}".strip())
        task = filled
    missing = _missing(task)
    if missing in ("when", "time") and "offer_times" in context.tools and (
            missing == "time" or re.search(r"\b(any ?time|whenever|what (have|do) you|"
                                           r"free|available|earliest|soonest)\b", text.lower())):
        day = task.slots.get("day")
        return replace(task, asked="pick"), Call(
            "offer_times", {"date": day.isoformat()} if day else {})
    if missing is not None:
        question = _ASK[missing].format(day=say_when(task.slots["day"]) if missing == "time"
                                        else "")
        caught = _CAUGHT if task.asked == missing else ""
        return replace(task, asked=missing), Say(caught + question)
    if task.kind in _CONFIRMED:
        return replace(task, asked="confirm"), Say(_confirmation(task))
    return task, Call(_TOOL[task.kind], _arguments(task))


def _start(text: str, context: _Context, previous: str) -> tuple[_Task | None, Say | Call | None]:
    kind = _kind(text)
    if kind is None and _YES.search(text) and "take a message" in previous.lower():
        kind = "message"
    if kind is None and _YES.search(text) and "offer" in previous.lower() and \
            "free times" in previous.lower():
        return _advance(_Task("book", asked="offer"), text, context)
    if kind == "goodbye":
        if "end_call" in context.tools:
            return None, Call("end_call", {})
        return None, Say(FAREWELL_TEXT)
    if kind is None or _TOOL.get(kind) not in context.tools:
        return None, None
    return _advance(_Task(kind), text, context)


def _after(task: _Task | None, step: Say | Call, said: str,
           now: dt.datetime) -> _Task | None:
    """The task once the assistant said ``said`` after ``step`` ran."""
    if task is None or not isinstance(step, Call):
        return task
    open_question = said.rstrip().endswith("?")
    if open_question and said.rstrip().endswith(_READ_AGAIN):
        cleared = {k: v for k, v in task.slots.items() if k != "reference"}
        return replace(task, slots=cleared, asked="reference")
    if step.name == "offer_times" or (open_question and step.name in ("book_appointment",
                                                                      "change_appointment")):
        offered = _offered(said, now)
        cleared = {k: v for k, v in task.slots.items() if k != "clock"}
        if offered:
            return replace(task, slots=cleared, asked="pick", offered=offered)
        return replace(task, slots=cleared, asked="offer") if open_question else None
    if step.name == "put_through" and open_question:
        return replace(task, asked="name", slots={})
    return None


def _turn(task: _Task | None, text: str, context: _Context,
          previous: str) -> tuple[_Task | None, Say | Call | None]:
    kind = _kind(text)
    if task is not None and task.asked in ("confirm", "offer") and _NO.search(text):
        kind = None  # "no thank you" to "Shall I book ...?" is a no, not a goodbye
    if task is None or (kind is not None and kind != task.kind and not (
            task.asked in ("message", "name") and kind != "goodbye")):
        return _start(text, context, previous)
    return _advance(task, text, context)


def next_step(history: Sequence[Mapping[str, Any]], question: str, tools: Sequence[ToolSpec],
              results: Sequence[ToolFinished], now: dt.datetime, *,
              caller_number_known: bool = False,
              answer: Callable[[str], str] = lambda question: "") -> Say | Call | None:
    """What to say or do next on a call; None when no task is in hand and the question is
    none of the call's tasks (the caller answers it from the documents)."""
    context = _Context(now, frozenset(t.name for t in tools), caller_number_known, answer)
    task: _Task | None = None
    previous = ""
    pending: Say | Call | None = None
    for message in history:
        role, content = message.get("role"), message.get("content")
        if not isinstance(content, str):
            continue
        if role == "user":
            task, pending = _turn(task, content, context, previous)
        elif role == "assistant":
            if pending is not None:
                task = _after(task, pending, content, now)
            previous, pending = content, None
    task, step = _turn(task, question, context, previous)
    if not results:
        return step
    return _after_results(task, step, results, context)


def cannot_do(question: str, tools: Sequence[ToolSpec]) -> str | None:
    """What to say when ``question`` asks for a call task that none of ``tools`` does:
    the caller asked for something the line does not offer, which is not the same as
    a question the documents do not answer. None when it asks for no such task."""
    kind = _kind(question)
    if kind not in _CANNOT or any(tool.name == _TOOL[kind] for tool in tools):
        return None
    return f"I'm sorry, I can't {_CANNOT[kind]} on this call."


def _fields(result: ToolFinished) -> dict[str, Any]:
    try:
        value = json.loads(result.content)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _after_results(task: _Task | None, step: Say | Call | None,
                   results: Sequence[ToolFinished], context: _Context) -> Say | Call | None:
    last = results[-1]
    fields = _fields(last)
    if last.name == "end_call":
        return Say(FAREWELL_TEXT)
    refused = fields.get("booked") is False or fields.get("changed") is False
    said = str(fields.get("text", ""))
    gated = fields.get("changed") is False or fields.get("cancelled") is False
    if gated and said.endswith("those details."):  # the gate's refusal: one may try again
        return Say(f"{said} {_READ_AGAIN}")
    if refused and last.status is ToolStatus.OK and said.endswith("?") \
            and "offer_times" in context.tools and len(results) == 1:
        day = task.slots.get("day") if task else None
        return Call("offer_times", {"date": day.isoformat()} if day else {})
    if last.name == "offer_times" and len(results) > 1 and fields.get("times"):
        return Say("I'm sorry, that time isn't free. " + str(fields["text"]))
    return None  # the plain reading of the tool's answer
