"""The sentences of one line's language model.

Five sources, in the proportions a caller's speech has them: what the line knows (the
agent's instructions and its Libraries' text), how callers ask for what its call tools
do (booking, changing, cancelling, messages, a person), numbers, dates and times,
callers' names (every booking and message asks for one, and a name the model lacks
cannot be heard at all), and a small conversational set (greetings, yes and no,
thanks, goodbye). The fixed sets
are repeated so that a long Library does not drown the words every call needs.
"""

from __future__ import annotations

__all__ = ["CORPUS_VERSION", "LineText", "line_sentences"]

from collections.abc import Iterable, Sequence

from num2words import num2words

from ..records import frozen
from ._words import spoken_sentences

#: Part of every model's fingerprint: a change here rebuilds every line's model.
CORPUS_VERSION = 2

#: How often each fixed sentence counts against one sentence of the line's own text.
_FIXED_WEIGHT = 3

_CONVERSATION = """
yes. no. yes please. no thanks. no thank you. yeah. yep. nope. okay. ok. sure. right.
that's right. that's correct. correct. that's fine. fine. perfect. great. lovely.
hello. hi. hello there. good morning. good afternoon. good evening.
thank you. thanks. thanks very much. thank you very much. cheers.
goodbye. bye. bye bye. thank you goodbye. thanks bye. that's all thank you.
that's everything. nothing else thanks. no that's all. have a nice day. you too.
sorry. sorry what was that. pardon. could you repeat that. say that again please.
i don't know. i'm not sure. maybe. wait. hold on. one moment. just a second.
stop. cancel. never mind. go back. start again.
can you help me. i have a question. i'd like to ask about something.
what is. what are. when is. where is. how much is. how long does it take. how do i.
is there. are you open. do you have. can i. could i. would it be possible to.
"""

_CALL_TOOLS = """
i'd like to book an appointment. can i book an appointment. i want to make a booking.
i would like to make an appointment please. do you have any free slots.
is there anything available. what times do you have. when is the next free slot.
can i come in on monday. can i come tomorrow. is tomorrow morning free.
book me in for tomorrow at ten. the first one please. the earlier one. the later one.
i need to change my appointment. can i move my booking. i'd like to reschedule.
can i cancel my appointment. please cancel my booking. i can't make it.
my reference is. the reference number is. my booking reference is.
can i leave a message. please take a message. can you pass on a message.
could someone call me back. ask them to call me back. tell them i called.
my name is. this is. it's. my number is. you can reach me on. call me on.
can i speak to someone. can i talk to a person. put me through please.
i'd like to speak to the receptionist. is there someone i can talk to.
what are your opening hours. when are you open. are you open today.
what time do you close. where are you. how do i get there. is there parking.
"""

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_PARTS_OF_DAY = ("morning", "afternoon", "evening", "lunchtime")


#: Common given names and surnames of English-speaking callers, all in the bundled
#: pronouncing dictionary. Names outside the list are still guessed from the sounds.
_GIVEN_NAMES = """
john james david michael peter paul mark andrew richard robert thomas william george
daniel chris matthew simon stephen tom jack harry oliver sam ben adam alan brian tony
mary sarah jane anne emma susan helen karen linda lisa claire laura rachel kate
emily sophie lucy amy hannah jessica rebecca louise alice elizabeth margaret ruth
"""
_SURNAMES = """
smith jones williams taylor brown davies evans wilson thomas johnson roberts walker
wright robinson thompson white hughes edwards green hall wood harris lewis martin
jackson clarke clark turner hill scott cooper morris ward moore king watson baker
harrison morgan patel young allen mitchell anderson lee bell parker davis miller
"""
_NAME_LEADS = ("my name is", "it's", "this is", "i'm")


@frozen
class LineText:
    """What one line's agent knows: its instructions, its Libraries' text (one string
    a document or chunk) and the descriptions of its call tools."""

    instructions: str = ""
    library_texts: Sequence[str] = ()
    tool_descriptions: Sequence[str] = ()


def _dates_and_times() -> list[str]:
    hours = [num2words(h) for h in range(1, 13)]
    sentences = [f"{hour} o'clock" for hour in hours]
    sentences += [f"at {hour}" for hour in hours]
    sentences += [f"half past {hour}" for hour in hours]
    sentences += [f"quarter past {hour}. quarter to {hour}" for hour in hours]
    sentences += [f"{hour} thirty" for hour in hours] + [f"{hour} fifteen" for hour in hours]
    sentences += [f"{hour} a m. {hour} p m" for hour in hours]
    for day in _DAYS:
        sentences += [f"on {day}", f"next {day}", f"this {day}"]
        sentences += [f"{day} {part}" for part in _PARTS_OF_DAY]
    days_of_month = [num2words(d, to="ordinal") for d in range(1, 32)]
    sentences += [f"the {d} of {m}" for m in _MONTHS for d in days_of_month[::3]]
    sentences += [f"{m} the {d}" for m in _MONTHS for d in days_of_month[1::3]]
    sentences += ["today", "tomorrow", "the day after tomorrow", "tomorrow morning",
                  "tomorrow afternoon", "this afternoon", "next week", "later today",
                  "in the morning", "in the afternoon", "any time", "as soon as possible"]
    return sentences


def _numbers() -> list[str]:
    digits = [num2words(d) for d in range(10)]
    sentences = [" ".join(digits[(i + j) % 10] for j in range(4)) for i in range(10)]
    sentences += [f"double {d}" for d in digits] + ["oh", "zero"]
    sentences += [num2words(n).replace("-", " ") for n in range(1, 100)]
    return sentences


def _names() -> list[str]:
    """Names as callers give them: alone, in full, after "my name is"; each surname
    after several given names, so no pair is favoured much over another."""
    given, surnames = _GIVEN_NAMES.split(), _SURNAMES.split()
    sentences = given + surnames
    for shift in range(3):
        for index, first in enumerate(given):
            last = surnames[(index * 7 + shift * 13) % len(surnames)]
            lead = _NAME_LEADS[(index + shift) % len(_NAME_LEADS)]
            sentences += [f"{first} {last}", f"{lead} {first} {last}"]
    return sentences


def _from_text(texts: Iterable[str]) -> list[str]:
    return [s for text in texts for s in spoken_sentences(text)]


def line_sentences(line: LineText) -> list[str]:
    """The sentences of ``line``'s language model, in a stable order."""
    fixed = (spoken_sentences(_CONVERSATION) + spoken_sentences(_CALL_TOOLS)
             + _from_text(_dates_and_times()) + _from_text(_numbers()) + _names())
    own = _from_text([line.instructions, *line.library_texts, *line.tool_descriptions])
    return fixed * _FIXED_WEIGHT + own
