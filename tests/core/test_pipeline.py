"""The pipeline's pure parts: prompt, citations, reply assembly, step budget, tool rules."""

from __future__ import annotations

import json
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import LocalProtocolError
from core.passages import Passage
from core.pipeline import (
    CITATION_RULE,
    AppToolPolicy,
    CallToolPolicy,
    CitationsFound,
    Finished,
    ReplyAssembler,
    StepBudget,
    TextDelta,
    ToolFinished,
    ToolSpec,
    ToolStatus,
    build_messages,
    check_arguments,
    check_parameters_schema,
    cited_numbers,
    event_payload,
    history_window,
    map_citations,
    parse_arguments,
    result_text,
)


def passage(text: str, title: str = "Handbook") -> Passage:
    return Passage(uuid.uuid4(), uuid.uuid4(), title, 0, 0, len(text), text, 1.0)


# -- prompt ---------------------------------------------------------------------------


def test_prompt_numbers_passages_and_asks_for_citations():
    messages = build_messages("Be kind.", [passage("Alpha."), passage("Beta.", "Guide")], [],
                              "What is beta?")
    system = messages[0]["content"]
    assert system.startswith("Be kind.") and CITATION_RULE in system
    assert "[1] (Handbook) Alpha." in system and "[2] (Guide) Beta." in system
    assert messages[-1] == {"role": "user", "content": "What is beta?"}


def test_prompt_without_passages_has_no_citation_rule():
    system = build_messages("", [], [], "Hi")[0]["content"]
    assert CITATION_RULE not in system and system  # a default instruction stands in


def test_history_keeps_newest_plain_turns_in_order():
    history = [{"role": "user", "content": f"q{i}"} for i in range(30)]
    history += [{"role": "tool", "content": "x"}, {"role": "assistant", "content": ""}]
    kept = history_window(history, max_messages=5)
    assert [m["content"] for m in kept] == ["q25", "q26", "q27", "q28", "q29"]
    assert history_window([{"role": "user", "content": "x" * 50}] * 3, max_chars=120) == [
        {"role": "user", "content": "x" * 50}] * 2


# -- citations -------------------------------------------------------------------------


@pytest.mark.parametrize("text, numbers", [
    ("Open at 8 [1]. Parking free [2].", [1, 2]),
    ("Both [2][1] and again [1].", [2, 1]),
    ("Lists [1, 3] and ranges [4-5].", [1, 3, 4, 5]),
    ("No markers; an array a[i] is not one.", []),
    ("Absurd ranges [1-900] are ignored.", []),
])
def test_cited_numbers_read_every_marker_shape(text, numbers):
    assert cited_numbers(text) == numbers


def test_citations_map_markers_to_passages_and_drop_invented_numbers():
    sources = [passage("The clinic opens at 8."), passage("Parking is free. " * 40, "Parking")]
    citations = map_citations("Free parking [2], opens at 8 [1], see [7].", sources)
    assert [c.number for c in citations] == [2, 1]
    first = citations[0]
    assert first.document_id == sources[1].document_id and first.title == "Parking"
    assert first.snippet.endswith("…") and len(first.snippet) <= 301
    view = first.as_json()
    assert set(view) == {"number", "library_id", "document_id", "document", "title", "snippet"}


@given(st.text())
def test_cited_numbers_never_fail_on_any_text(text):
    assert all(n >= 0 for n in cited_numbers(text))


# -- reply assembly --------------------------------------------------------------------


def chunk(delta=None, finish=None, usage=None):
    out = {"choices": [] if delta is None else [{"index": 0, "delta": delta,
                                                  "finish_reason": finish}]}
    if usage:
        out["usage"] = usage
    return out


def test_streamed_tool_call_arguments_assemble_across_chunks():
    reply = ReplyAssembler()
    head = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "current_time", "arguments": ""}}
    reply.feed(chunk({"role": "assistant", "content": None, "tool_calls": [head]}))
    for piece in ('{"time', 'zone": "Eur', 'ope/Paris"}'):
        reply.feed(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    reply.feed(chunk({}, "tool_calls"))
    reply.feed(chunk(None, usage={"prompt_tokens": 12, "completion_tokens": 3}))
    [call] = reply.tool_calls
    assert (call.id, call.name, json.loads(call.arguments)) == (
        "call_1", "current_time", {"timezone": "Europe/Paris"})
    assert reply.finish_reason == "tool_calls"
    assert (reply.prompt_tokens, reply.completion_tokens) == (12, 3)


def test_whole_tool_calls_and_parallel_calls_assemble_too():
    reply = ReplyAssembler()
    calls = [{"function": {"name": "a", "arguments": {"x": 1}}},
             {"id": "c2", "function": {"name": "b", "arguments": "{}"}}]
    reply.feed(chunk({"tool_calls": calls}, "tool_calls"))
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_0", "a", '{"x": 1}'), ("c2", "b", "{}")]


def test_text_deltas_are_returned_and_kept():
    reply = ReplyAssembler()
    assert reply.feed(chunk({"role": "assistant", "content": ""})) == ""
    assert reply.feed(chunk({"content": "Hel"})) == "Hel"
    reply.feed(chunk({"content": "lo"}, "stop"))
    assert reply.text == "Hello" and reply.tool_calls == []


@given(st.lists(st.dictionaries(st.sampled_from(["choices", "usage", "x"]),
                                st.recursive(st.none() | st.integers() | st.text(),
                                             lambda c: st.lists(c) | st.dictionaries(st.text(), c),
                                             max_leaves=8))))
def test_reply_assembler_survives_any_chunk_shape(chunks):
    reply = ReplyAssembler()
    for c in chunks:
        assert isinstance(reply.feed(c), str)
    assert isinstance(reply.tool_calls, list)


# -- step budget -------------------------------------------------------------------------


def test_last_step_forbids_tools_and_budget_then_refuses():
    budget = StepBudget(max_steps=3)
    assert [budget.start_step() for _ in range(3)] == ["auto", "auto", "none"]
    assert budget.exhausted
    with pytest.raises(LocalProtocolError):
        budget.start_step()


def test_calls_over_the_per_reply_limit_are_split_off():
    budget = StepBudget(max_calls_per_step=2)
    reply = ReplyAssembler()
    reply.feed(chunk({"tool_calls": [{"index": i, "function": {"name": f"t{i}"}}
                                     for i in range(3)]}))
    run, skipped = budget.split_calls(reply.tool_calls)
    assert [c.name for c in run] == ["t0", "t1"] and [c.name for c in skipped] == ["t2"]


# -- tools -----------------------------------------------------------------------------------

BOOK = ToolSpec("book_slot", "Book an appointment.", side_effecting=True)
LOOKUP = ToolSpec("lookup", "Read the price list.")
ON_CALL = ToolSpec("take_message", "Take a message.", side_effecting=True, usable_on_call=True)


def test_call_policy_refuses_unmarked_side_effecting_tools_with_sayable_text():
    policy = CallToolPolicy(timeout_seconds=8)
    refusal = policy.check(BOOK)
    assert refusal is not None and "take a message" in refusal
    assert policy.check(LOOKUP) is None and policy.check(ON_CALL) is None
    assert policy.timeout_text(BOOK) == refusal  # spec: told the same as for a refusal


def test_app_policy_allows_everything():
    policy = AppToolPolicy()
    assert all(policy.check(t) is None for t in (BOOK, LOOKUP, ON_CALL))
    assert "30 seconds" in policy.timeout_text(LOOKUP)


@pytest.mark.parametrize("schema, problem", [
    ({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}, None),
    ({"type": "object"}, None),
    ([], "JSON object"),
    ({"type": "array"}, '"type": "object"'),
    ({"type": "object", "properties": []}, "properties must be an object"),
    ({"type": "object", "properties": {"q": {"type": "text"}}}, "not a JSON-schema type"),
    ({"type": "object", "properties": {}, "required": ["q"]}, "not in properties"),
    ({"type": "object", "required": "q"}, "list of property names"),
])
def test_parameters_schema_checks(schema, problem):
    found = check_parameters_schema(schema)
    assert (found is None) if problem is None else (problem in found)


def test_arguments_are_parsed_and_required_ones_checked():
    spec = ToolSpec("t", "d", {"type": "object", "properties": {"q": {"type": "string"}},
                               "required": ["q"]})
    assert parse_arguments("") == {}
    assert "not valid JSON" in parse_arguments("{oops")
    assert "JSON object" in parse_arguments("[1]")
    assert "needs the argument(s) q" in check_arguments(spec, {})
    assert check_arguments(spec, {"q": "x"}) is None


def test_results_become_text_or_none_when_unreadable():
    assert result_text({"a": 1}) == '{"a":1}'
    assert result_text(b"plain") == "plain"
    assert result_text(b"\xff\xfe") is None
    assert result_text(object()) is None
    assert result_text("nul\x00") is None
    assert result_text("x" * 9000).endswith("(truncated)")


def test_every_event_has_a_json_payload():
    finished = ToolFinished("c1", "lookup", ToolStatus.TIMEOUT, "too slow")
    assert event_payload(finished) == ("tool_finished", {
        "call_id": "c1", "name": "lookup", "status": "timeout", "content": "too slow"})
    cites = map_citations("x [1]", [passage("Alpha.")])
    name, payload = event_payload(Finished("x [1]", cites, "stop"))
    assert name == "finished" and payload["citations"][0]["number"] == 1
    json.dumps(payload)
    assert event_payload(TextDelta("hi")) == ("delta", {"text": "hi"})
    assert event_payload(CitationsFound(()))[1] == {"citations": []}
