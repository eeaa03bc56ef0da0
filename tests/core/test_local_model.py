"""The built-in local model: extractive answers with citations, and tools by rule."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.local_model import NOT_FOUND_TEXT, LocalAnswer, LocalToolCall, LocalTurn, respond
from core.passages import Passage
from core.pipeline import CallToolPolicy, ToolFinished, ToolSpec, ToolStatus, cited_numbers


def passage(text: str) -> Passage:
    return Passage(uuid.uuid4(), uuid.uuid4(), "Clinic", 0, 0, len(text), text, 1.0)


PASSAGES = [
    passage("The clinic opens at 8am on weekdays. Parking is free behind the building."),
    passage("A consultation costs 40 euros. Children under 12 are seen free of charge."),
]
TIME = ToolSpec("current_time", "The current time in a timezone.",
                {"type": "object", "properties": {"timezone": {"type": "string"}},
                 "required": ["timezone"]})
BOOK = ToolSpec("book_appointment", "Book an appointment in the diary.",
                {"type": "object", "properties": {
                    "date": {"type": "string"}, "time": {"type": "string"},
                    "caller_name": {"type": "string", "description": "Name of the caller"}},
                 "required": ["date", "time", "caller_name"]}, side_effecting=True)
MESSAGE = ToolSpec("take_message", "Take a message for the team.",
                   {"type": "object", "properties": {"message": {"type": "string"}},
                    "required": ["message"]}, side_effecting=True, usable_on_call=True)
TRANSFER = ToolSpec("put_through", "Put the caller through to a person.", side_effecting=True)
END_CALL = ToolSpec("end_call", "End the telephone call and hang up.", usable_on_call=True)
TOOLS = [TIME, BOOK, MESSAGE, TRANSFER, END_CALL]


def test_answers_with_the_best_sentence_and_its_citation():
    answer = respond(LocalTurn("How much does a consultation cost?", PASSAGES))
    assert answer == LocalAnswer("A consultation costs 40 euros [2].")


def test_answer_cites_each_passage_it_uses_in_document_order():
    answer = respond(LocalTurn("When does the clinic open and is parking free?", PASSAGES))
    assert isinstance(answer, LocalAnswer)
    assert answer.text.startswith("The clinic opens at 8am") and cited_numbers(answer.text) == [1]


@pytest.mark.parametrize("question", ["Do you sell bicycles?", "hello", ""])
def test_says_plainly_when_the_documents_do_not_hold_it(question):
    assert respond(LocalTurn(question, PASSAGES)) == LocalAnswer(NOT_FOUND_TEXT)
    assert respond(LocalTurn("How much is a consultation?", [])) == LocalAnswer(NOT_FOUND_TEXT)


@pytest.mark.parametrize("question, call", [
    ("What time is it in Europe/Paris?", LocalToolCall("current_time", {"timezone": "Europe/Paris"})),
    ("Please take a message: the boiler is fixed.",
     LocalToolCall("take_message", {"message": "Please take a message: the boiler is fixed."})),
    ("Can I speak to a person?", LocalToolCall("put_through", {})),
    ("Thank you, goodbye.", LocalToolCall("end_call", {})),
    ("OK that's all, bye", LocalToolCall("end_call", {})),
    ("I'd like to book an appointment on 2026-12-01 at 10:30, my name is Ann Lee",
     LocalToolCall("book_appointment", {"date": "2026-12-01", "time": "10:30",
                                        "caller_name": "Ann Lee"})),
])
def test_intent_rules_call_the_matching_tool_with_parsed_arguments(question, call):
    assert respond(LocalTurn(question, PASSAGES, TOOLS)) == call


def test_asks_for_a_required_argument_it_cannot_parse():
    answer = respond(LocalTurn("I want to book an appointment on 2026-12-01 at 10:30", (), TOOLS))
    assert answer == LocalAnswer("I can do that. First, what is the name of the caller?")


def test_a_long_question_is_read_in_one_pass_for_an_address():
    # A run of address characters with no "@" in it: a pattern tried from each of its
    # characters would take hours at this length.
    notify = ToolSpec("notify_by_email", "Send a message by email.",
                      {"type": "object", "properties": {"email": {"type": "string"}},
                       "required": ["email"]})
    answer = respond(LocalTurn("message " + "a." * 256_000, (), [notify]))
    assert answer == LocalAnswer("I can do that. First, what is the email?")
    call = respond(LocalTurn("message ann.lee+desk@clinic.example please", (), [notify]))
    assert call == LocalToolCall("notify_by_email", {"email": "ann.lee+desk@clinic.example"})


def test_intent_without_a_matching_tool_falls_back_to_the_documents():
    answer = respond(LocalTurn("Can I book parking behind the building?", PASSAGES, [TIME]))
    assert isinstance(answer, LocalAnswer) and "[1]" in answer.text


def test_after_a_tool_it_reports_the_result():
    done = ToolFinished("c", "current_time", ToolStatus.OK,
                        '{"text": "It is 09:00 in Europe/Paris.", "weekday": "Monday"}')
    turn = LocalTurn("What time is it?", (), TOOLS, [done])
    assert respond(turn) == LocalAnswer("It is 09:00 in Europe/Paris.")
    plain = ToolFinished("c", "lookup", ToolStatus.OK, '{"price": 40, "currency": "EUR"}')
    assert respond(LocalTurn("?", tool_results=[plain])) == LocalAnswer("price: 40; currency: EUR.")


def test_after_a_refusal_on_a_call_it_offers_to_take_a_message():
    refusal = CallToolPolicy().check(BOOK)
    refused = ToolFinished("c", BOOK.name, ToolStatus.REFUSED, refusal)
    answer = respond(LocalTurn("Book me in", (), TOOLS, [refused]))
    assert "take a message" in answer.text
    failed = ToolFinished("c", BOOK.name, ToolStatus.ERROR, "The tool failed: boom.")
    assert respond(LocalTurn("Book me in", (), TOOLS, [failed])).text.startswith("I'm sorry")


@given(st.text(), st.lists(st.text(), max_size=4))
def test_any_question_and_passages_give_an_answer_or_a_known_tool(question, texts):
    result = respond(LocalTurn(question, [passage(t) for t in texts], TOOLS))
    if isinstance(result, LocalToolCall):
        assert result.name in {t.name for t in TOOLS}
    else:
        numbers = cited_numbers(result.text)
        assert result.text and all(1 <= n <= len(texts) for n in numbers)
