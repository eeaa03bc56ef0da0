"""The local model holding a conversation on a call, in text: each flow with fake tools."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

from core.call_dialogue import FAREWELL_TEXT
from core.local_model import NOT_FOUND_TEXT, LocalAnswer, LocalToolCall, LocalTurn, respond
from core.passages import Passage
from core.pipeline import ToolFinished, ToolSpec, ToolStatus
from core.spoken import read_clock, read_day, read_digits, say_when

LONDON = ZoneInfo("Europe/London")
NOW = dt.datetime(2026, 11, 25, 9, 0, tzinfo=LONDON)  # a Wednesday

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def _spec(name: str) -> ToolSpec:
    return ToolSpec(name, name, {"type": "object", "properties": {}}, usable_on_call=True)


class Line:
    """A conversation with fake tools; ``calls`` records every tool call."""

    def __init__(self, **handlers: Handler) -> None:
        self.handlers = handlers
        self.history: list[dict[str, str]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def say(self, text: str) -> str:
        results: list[ToolFinished] = []
        tools = [_spec(name) for name in self.handlers]
        while True:
            decision = respond(LocalTurn(text, (), tools, tuple(results), list(self.history),
                                         NOW))
            if isinstance(decision, LocalAnswer):
                break
            assert isinstance(decision, LocalToolCall)
            self.calls.append((decision.name, decision.arguments))
            value = self.handlers[decision.name](decision.arguments)
            results.append(ToolFinished(f"c{len(results)}", decision.name, ToolStatus.OK,
                                        json.dumps(value)))
        self.history += [{"role": "user", "content": text},
                         {"role": "assistant", "content": decision.text}]
        return decision.text


def _booked(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"text": "You're booked. Your reference is A C E 3 4 7.", "booked": True}


def _offer(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"text": "I can offer Monday 30 November at 9 am, Monday 30 November at 9:30 am or "
                    "Monday 30 November at 10 am. Which would suit you?",
            "times": [{"date": "2026-11-30", "time": "09:00"}]}


def test_spoken_dates_times_and_numbers():
    assert read_day("monday at ten", NOW) == dt.date(2026, 11, 30)
    assert read_day("the third of december", NOW) == dt.date(2026, 12, 3)
    assert read_day("tomorrow afternoon", NOW) == dt.date(2026, 11, 26)
    assert read_clock("monday at ten") == dt.time(10, 0)
    assert read_clock("half past two") == dt.time(14, 30)
    assert read_clock("the third of december") is None
    assert read_digits("it's oh seven seven double oh nine oh oh one two three") == "07700900123"
    assert say_when(dt.date(2026, 12, 1), dt.time(10)) == (
        "Tuesday the first of December at ten a.m.")


def test_booking_over_several_turns_confirmed_before_booking():
    line = Line(offer_times=_offer, book_appointment=_booked)
    assert line.say("Hello, I'd like to book a check-up") == "What day and time would suit you?"
    assert line.say("Tuesday the first of December at ten") == "May I have your name, please?"
    assert line.say("It's Sarah Jones") == ("Shall I book Tuesday the first of December at ten "
                                            "a.m. for Sarah Jones?")
    assert line.calls == []
    assert line.say("Yes please") == "You're booked. Your reference is A C E 3 4 7."
    assert line.calls == [("book_appointment", {"date": "2026-12-01", "time": "10:00",
                                                "caller_name": "Sarah Jones",
                                                "subject": "Check-up"})]


def test_the_answer_to_the_name_question_is_a_name_and_never_moves_the_time():
    # A name the recogniser misheard as "may the eighth" is still the name given: the
    # time the caller chose stays, and the read-back lets them put either right.
    line = Line(book_appointment=_booked)
    line.say("I'd like to book an appointment for tomorrow at ten")
    assert line.say("may the eighth") == ("Shall I book Thursday the twenty sixth of "
                                          "November at ten a.m. for May The Eighth?")


def test_a_plain_booking_gets_a_neutral_subject_and_no_means_ask_again():
    line = Line(book_appointment=_booked)
    line.say("Can I make an appointment for Monday at half past two? My name is Tom Hardy")
    assert line.say("no thank you") == "Sorry about that. What day and time would suit you?"
    assert line.say("tomorrow at 11 am").startswith("Shall I book Thursday the twenty sixth")
    line.say("yes")
    [(_, arguments)] = line.calls
    assert arguments["subject"] == "Appointment" and arguments["time"] == "11:00"


def test_a_taken_time_offers_free_ones_and_the_caller_picks():
    taken = iter([{"text": "I'm sorry, that time isn't available. Shall I offer some free "
                           "times?", "booked": False}, _booked({})])
    line = Line(offer_times=_offer, book_appointment=lambda a: next(taken))
    line.say("I'd like to book a check-up on Monday at 4 pm, my name is Sarah Jones")
    said = line.say("yes")
    assert said.startswith("I'm sorry, that time isn't free. I can offer Monday 30 November")
    assert [name for name, _ in line.calls] == ["book_appointment", "offer_times"]
    assert line.say("the second one") == ("Shall I book Monday the thirtieth of November at "
                                          "half past nine a.m. for Sarah Jones?")
    line.say("yes")
    assert line.calls[-1][1]["time"] == "09:30"


def test_a_day_without_a_time_offers_that_days_times():
    line = Line(offer_times=_offer, book_appointment=_booked)
    line.say("I need an appointment")
    assert line.say("Monday please").startswith("I can offer")
    assert line.calls == [("offer_times", {"date": "2026-11-30"})]


def test_change_by_reference():
    line = Line(change_appointment=lambda a: {"text": "Done.", "changed": True})
    assert line.say("I need to change my appointment") == "What is your booking reference?"
    assert line.say("a c e three four seven") == "What day and time would suit you?"
    assert line.say("Friday at 9") == ("Shall I move booking A C E 3 4 7 to Friday the "
                                       "twenty seventh of November at nine a.m.?")
    assert line.say("yes") == "Done."
    assert line.calls == [("change_appointment", {"date": "2026-11-27", "time": "09:00",
                                                  "reference": "ACE347"})]


def test_a_refused_reference_can_be_read_again():
    answers = iter([{"text": "I'm sorry, I can't find a booking with those details.",
                     "cancelled": False}, {"text": "Cancelled.", "cancelled": True}])
    line = Line(cancel_appointment=lambda a: next(answers))
    line.say("Cancel booking ACE347 please")
    assert line.say("yes") == ("I'm sorry, I can't find a booking with those details. "
                               "Could you read me the reference again?")
    assert line.say("it's A C E three four nine") == "Shall I cancel booking A C E 3 4 9?"
    assert line.say("yes") == "Cancelled."
    assert [a["reference"] for _, a in line.calls] == ["ACE347", "ACE349"]


def test_a_question_in_the_middle_is_answered_then_the_task_goes_on():
    line = Line(book_appointment=_booked)
    line.say("I'd like to book a check-up")
    said = line.say("Sorry, what are your opening hours?")
    assert said.startswith("I could not find that") and said.endswith(
        "What day and time would suit you?")
    assert line.say("Monday at ten") == "May I have your name, please?"


def test_cancel_asks_first():
    line = Line(cancel_appointment=lambda a: {"text": "Cancelled.", "cancelled": True})
    assert line.say("Please cancel booking ACE347") == "Shall I cancel booking A C E 3 4 7?"
    assert line.calls == []
    assert line.say("yes") == "Cancelled."
    assert line.calls == [("cancel_appointment", {"reference": "ACE347"})]


def test_take_a_message_with_name_number_and_text_apart():
    line = Line(take_message=lambda a: {"text": "Thank you. I've taken your message.",
                                        "taken": True})
    assert line.say("Can I leave a message?") == "May I have your name, please?"
    assert line.say("I'm calling about my boiler") == (
        "Sorry, I didn't catch that. May I have your name, please?")
    assert line.say("Peter Mills") == "What number can we call you back on?"
    assert line.say("oh seven seven double oh nine oh oh one two three") == (
        "What would you like me to pass on?")
    assert line.say("The boiler is leaking again") == "Thank you. I've taken your message."
    [(name, arguments)] = line.calls
    assert name == "take_message"
    assert arguments == {"caller_name": "Peter Mills", "subject": "Message taken on a call",
                         "callback_number": "07700900123",
                         "message": "The boiler is leaking again"}


def test_transfer_gives_the_name_and_answers_the_screening_question():
    names = []

    def put_through(arguments):
        names.append(arguments.get("caller_name"))
        if len(names) == 1:
            return {"text": "Before I put you through, may I have your full name?",
                    "putting_through": False}
        return {"text": "I'll put you through now.", "putting_through": True}

    line = Line(put_through=put_through)
    assert line.say("Can I speak to someone please") == (
        "Before I put you through, may I have your full name?")
    assert line.say("Joanna Baker") == "I'll put you through now."
    assert names == [None, "Joanna Baker"]
    assert Line(put_through=lambda a: {"text": "Putting you through.", "putting_through": True}
                ).say("Put me through please, I'm Tom Hardy") == "Putting you through."


def test_an_unknown_question_offers_a_message():
    line = Line(take_message=lambda a: {"text": "Taken.", "taken": True})
    said = line.say("What is the meaning of life?")
    assert said.startswith("I could not find that") and "take a message" in said
    assert line.say("yes please") == "May I have your name, please?"


def test_a_task_the_line_does_not_offer_is_declined_not_looked_up():
    assert Line().say("Can I leave a message please") == (
        "I'm sorry, I can't take messages on this call.")
    assert Line().say("Can I talk to someone please") == (
        "I'm sorry, I can't put you through to a person on this call.")
    line = Line(take_message=lambda a: {"text": "Taken.", "taken": True})
    said = line.say("I'd like to book an appointment")
    assert said.startswith("I'm sorry, I can't book appointments on this call.")
    assert said.endswith("I can take a message for you instead, if you like.")
    assert line.say("yes please") == "May I have your name, please?"


def test_what_the_documents_say_comes_before_declining_a_task():
    passages = [Passage(uuid.uuid4(), uuid.uuid4(), "Clinic", 0, 0, 60,
                        "Appointments can be booked online at kerrigan.example.", 1.0)]
    said = respond(LocalTurn("How do I book an appointment online", passages, (), now=NOW))
    assert said == LocalAnswer("Appointments can be booked online at kerrigan.example [1].")


def test_long_turns_built_to_be_slow_are_read_in_one_pass():
    # Each would make a pattern scan the rest of the turn again from each of its
    # characters: hours at these lengths.
    booking = Line(book_appointment=_booked)
    assert booking.say("book x" + " " * 256_000 + "y") == "What day and time would suit you?"
    assert Line().say("change " * 64_000) == NOT_FOUND_TEXT
    offering = Line(offer_times=lambda a: {"text": "I can offer a" + " " * 256_000 + "x?"},
                    book_appointment=_booked)
    offering.say("I need an appointment")
    assert offering.say("Monday please").endswith("x?")
    offering.say("the first one")  # an offer that named no time: offered again
    assert [name for name, _ in offering.calls] == ["offer_times", "offer_times"]


def test_goodbye_ends_the_call_when_it_can():
    line = Line(end_call=lambda a: {"text": "Ending.", "ending": True})
    assert line.say("That's all, thank you, bye") == FAREWELL_TEXT
    assert line.calls == [("end_call", {})]
    assert Line().say("goodbye") == FAREWELL_TEXT
