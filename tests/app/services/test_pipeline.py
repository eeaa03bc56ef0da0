"""The agent pipeline end to end: a provider row pointing at the loopback fake upstream,
an agent row, and the events a turn emits — text, tools, failures, usage, citations.

The helpers at the top (``add_account``, ``add_agent``,
``add_fake_provider``, ``StaticRetriever``, ``turn``) serve the chat tests as well.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import aclosing
from typing import Any

import anyio
import pytest

from adapters.providers import Timeouts
from app.services.access import reach_of_account
from app.services.pipeline import TurnRequest, load_agent
from app.tables import Agent, UsageEvent
from core.access import Reach
from core.local_model import NOT_FOUND_TEXT
from core.passages import Passage
from core.pipeline import (
    AppToolPolicy,
    CallToolPolicy,
    CitationsFound,
    Failed,
    Finished,
    TextDelta,
    ToolFailed,
    ToolFinished,
    ToolSpec,
    ToolStarted,
    ToolStatus,
    UsageCounted,
)
from app.services.call_context import CallContext
from tests.fakes.upstream import Behaviour, FakeUpstream, ToolCall

pytestmark = pytest.mark.anyio


class StaticRetriever:
    """Stands in for the Libraries search: the same passages for every question."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        self.passages = list(passages)
        self.queries: list[tuple[Reach, tuple[uuid.UUID, ...], str]] = []

    async def search(self, reach, library_ids, query, *, limit=6):
        self.queries.append((reach, tuple(library_ids), query))
        return self.passages[:limit]


def passage(text: str, title: str = "Clinic guide") -> Passage:
    return Passage(uuid.uuid4(), uuid.uuid4(), title, 0, 0, len(text), text, 1.0)


async def add_account(services, email: str = "ann@example.org", role: str = "user") -> uuid.UUID:
    row = await services.accounts.create(email, "correct horse battery staple", role)
    return row["id"]


async def add_fake_provider(services, fake: FakeUpstream, actor: uuid.UUID) -> None:
    await services.providers.create(actor=actor, name="fake", base_url=fake.base_url,
                                    api_key="sk-fake", models=["fake-small"])


async def add_agent(owner: uuid.UUID, *, model: str = "fake-small",
                    tools: Sequence[str] = (), instructions: str = "Be brief.") -> uuid.UUID:
    agent = Agent(name="Front desk", model=model, owner_id=owner, tools=list(tools),
                  instructions=instructions)
    await agent.save()
    return agent.id


async def turn(services, owner: uuid.UUID, agent_id: uuid.UUID, question: str,
               **options: Any) -> list[Any]:
    """All events of one turn (bounded in time, so a hang fails instead of stalling)."""
    reach = await reach_of_account(owner, False)
    agent = await load_agent(agent_id, reach)
    request = TurnRequest(agent, question, reach, **options)
    with anyio.fail_after(20):
        async with aclosing(services.pipeline.run(request)) as events:
            return [event async for event in events]


async def usage_rows() -> list[dict[str, Any]]:
    return await UsageEvent.select().order_by(UsageEvent.id)


@pytest.fixture
async def owner(services, fake):
    account = await add_account(services)
    await add_fake_provider(services, fake, account)
    yield account
    await services.aclose()  # the HTTP clients' pools


def text_of(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def only(events: list[Any], kind: type) -> Any:
    [event] = [e for e in events if isinstance(e, kind)]
    return event


# -- answers ------------------------------------------------------------------------------


async def test_streamed_answer_arrives_in_pieces_and_usage_is_recorded(services, fake, owner):
    fake.behaviour = Behaviour(text="We open at eight.", chunks=3)
    agent = await add_agent(owner)
    events = await turn(services, owner, agent, "When do you open?")
    assert [type(e) for e in events][-3:] == [UsageCounted, CitationsFound, Finished]
    assert len([e for e in events if isinstance(e, TextDelta)]) == 3
    finished = events[-1]
    assert text_of(events) == finished.text == "We open at eight."
    assert finished.finish_reason == "stop" and finished.completion_tokens == 3
    sent = fake.chat_requests()[0]
    assert sent["model"] == "fake-small" and sent["stream"] is True
    assert sent["messages"][0]["role"] == "system" and "Be brief." in sent["messages"][0]["content"]
    assert sent["messages"][-1] == {"role": "user", "content": "When do you open?"}
    assert fake.requests[0].headers["authorization"] == "Bearer sk-fake"
    await services.usage.drain()
    [row] = await usage_rows()
    assert (row["account_id"], row["model"], row["provider"], row["source"], row["outcome"]) == (
        owner, "fake-small", "fake", "app", "ok")
    assert row["completion_tokens"] == 3 and row["prompt_tokens"] > 0


async def test_history_is_sent_before_the_question(services, fake, owner):
    agent = await add_agent(owner)
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    await turn(services, owner, agent, "And now?", history=history)
    assert fake.chat_requests()[0]["messages"][1:] == [
        *history, {"role": "user", "content": "And now?"}]


async def test_passages_are_numbered_and_cited_markers_map_to_them(services, fake, owner):
    sources = [passage("The clinic opens at 8am."), passage("Parking is free.", "Parking")]
    services.pipeline.retriever = StaticRetriever(sources)
    agent_id = await add_agent(owner)
    await Agent.raw("INSERT INTO library (id, name, owner_id) VALUES ({}, 'Docs', {})",
                    sources[0].library_id, owner)
    await Agent.raw("INSERT INTO agent_library (agent_id, library_id) VALUES ({}, {})",
                    agent_id, sources[0].library_id)
    fake.behaviour = Behaviour(text="Parking is free [2]; we open at 8 [1][9].")
    events = await turn(services, owner, agent_id, "Where do I park?")
    system = fake.chat_requests()[0]["messages"][0]["content"]
    assert "[1] (Clinic guide) The clinic opens at 8am." in system and "[2] (Parking)" in system
    citations = only(events, CitationsFound).citations
    assert [(c.number, c.document_id, c.title) for c in citations] == [
        (2, sources[1].document_id, "Parking"), (1, sources[0].document_id, "Clinic guide")]
    assert events[-1].citations == citations
    [(reach, library_ids, query)] = services.pipeline.retriever.queries
    assert reach.account_id == owner and library_ids == (sources[0].library_id,)
    assert query == "Where do I park?"


# -- tools ----------------------------------------------------------------------------------


async def test_model_asks_for_current_time_and_is_called_again_with_the_result(
        services, fake, owner):
    fake.script = [Behaviour(tool_call=ToolCall("current_time", '{"timezone": "Europe/Paris"}')),
                   Behaviour(text="It is noon in Paris.")]
    agent = await add_agent(owner, tools=["current_time", "no_such_tool"])
    events = await turn(services, owner, agent, "What time is it in Paris?")
    started, finished = only(events, ToolStarted), only(events, ToolFinished)
    assert (started.name, started.arguments) == ("current_time", {"timezone": "Europe/Paris"})
    assert finished.status is ToolStatus.OK and "Europe/Paris" in finished.content
    assert events[-1].text == "It is noon in Paris." and events[-1].finish_reason == "stop"
    first, second = fake.chat_requests()
    assert [t["function"]["name"] for t in first["tools"]] == ["current_time"]  # unknown skipped
    assert first["tool_choice"] == "auto"
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "current_time"
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_fake_1",
                                      "content": finished.content}
    await services.usage.drain()
    assert [r["outcome"] for r in await usage_rows()] == ["ok", "ok"]


async def _tool_turn(services, fake, owner, name: str, **options: Any) -> tuple[ToolFinished, list]:
    fake.script = [Behaviour(tool_call=ToolCall(name, "{}")), Behaviour(text="Carrying on.")]
    agent = await add_agent(owner, tools=[name])
    events = await turn(services, owner, agent, "Do it.", **options)
    assert events[-1].finish_reason == "stop" and events[-1].text == "Carrying on."
    told = fake.chat_requests()[1]["messages"][-1]
    finished = only(events, ToolFinished)
    assert told["role"] == "tool" and told["content"] == finished.content
    return finished, events


async def _raises_internally(arguments):
    raise RuntimeError("database on fire")


async def _fails_with_a_reason(arguments):
    raise ToolFailed("the diary is closed today")


async def _returns_garbage(arguments):
    return b"\xff\xfe\x00garbage"


@pytest.mark.parametrize(("handler", "told"), [
    # internals ("fire") stay out of the model's view
    pytest.param(_raises_internally, "unexpected error", id="raises"),
    pytest.param(_fails_with_a_reason, "the diary is closed today", id="fails-with-a-reason"),
    pytest.param(_returns_garbage, "unreadable", id="returns-garbage"),
])
async def test_a_failing_tool_is_reported_to_the_model_and_the_conversation_goes_on(
        services, fake, owner, handler, told):
    services.tools.register(ToolSpec("flaky", "Sometimes breaks."), handler)
    finished, _ = await _tool_turn(services, fake, owner, "flaky")
    assert finished.status is ToolStatus.ERROR and told in finished.content
    assert "fire" not in finished.content


async def test_a_tool_past_its_ceiling_is_stopped_and_the_model_told(services, fake, owner):
    async def slow(arguments):
        await anyio.sleep(30)

    services.tools.register(ToolSpec("slow", "Takes ages."), slow)
    finished, _ = await _tool_turn(services, fake, owner, "slow",
                                   policy=AppToolPolicy(timeout_seconds=0.2))
    assert finished.status is ToolStatus.TIMEOUT and "0.2 seconds" in finished.content


async def test_on_a_call_an_unmarked_side_effecting_tool_is_refused_with_sayable_text(
        services, fake, owner):
    calls = []

    async def book(arguments):
        calls.append(arguments)
        return "booked"

    services.tools.register(ToolSpec("book_visit", "Books a visit.", side_effecting=True), book)
    finished, _ = await _tool_turn(services, fake, owner, "book_visit",
                                   policy=CallToolPolicy(timeout_seconds=8), source="telephone")
    assert finished.status is ToolStatus.REFUSED and "offer to take a message" in finished.content
    assert calls == []
    await services.usage.drain()
    assert {r["source"] for r in await usage_rows()} == {"telephone"}


async def test_on_a_call_a_slow_tool_is_told_like_a_refusal(services, fake, owner):
    async def slow(arguments):
        await anyio.sleep(30)

    services.tools.register(ToolSpec("lookup", "Reads a price."), slow)
    policy = CallToolPolicy(timeout_seconds=0.2)
    finished, _ = await _tool_turn(services, fake, owner, "lookup", policy=policy)
    assert finished.status is ToolStatus.TIMEOUT
    assert finished.content == policy.refusal_text(ToolSpec("lookup", "Reads a price."))


async def test_a_tool_that_wants_the_call_receives_the_same_context_every_turn(
        services, fake, owner):
    seen: list[CallContext | None] = []

    async def put_through(arguments, call):
        seen.append(call)
        if call is not None:
            call.transfer_requested = True
        return "Putting you through."

    async def plain(arguments):
        return "plain"

    services.tools.register(ToolSpec("transfer_now", "Transfers.", side_effecting=True,
                                     usable_on_call=True), put_through, wants_call=True)
    services.tools.register(ToolSpec("plain_tool", "Reads."), plain)
    call = CallContext(uuid.uuid4(), uuid.uuid4(), owner, "+441632960001")
    policy = CallToolPolicy(timeout_seconds=8)
    finished, _ = await _tool_turn(services, fake, owner, "transfer_now", policy=policy, call=call)
    assert finished.status is ToolStatus.OK and seen == [call] and call.transfer_requested
    fake.requests.clear()
    await _tool_turn(services, fake, owner, "transfer_now", policy=policy, call=call)
    assert seen == [call, call]  # one context per call, the same object every turn
    fake.requests.clear()
    outside, _ = await _tool_turn(services, fake, owner, "transfer_now")
    assert outside.status is ToolStatus.OK and seen[-1] is None  # outside a call: None
    fake.requests.clear()
    other, _ = await _tool_turn(services, fake, owner, "plain_tool", call=call)
    assert other.content == "plain"  # a handler that did not ask is called as before


async def test_a_model_that_keeps_asking_for_tools_is_stopped_by_the_step_budget(
        services, fake, owner):
    fake.behaviour = Behaviour(tool_call=ToolCall("current_time", "{}"))
    agent = await add_agent(owner, tools=["current_time"])
    events = await turn(services, owner, agent, "Loop forever")
    requests = fake.chat_requests()
    assert len(requests) == services.pipeline.max_steps
    assert requests[-1]["tool_choice"] == "none"
    assert events[-1].finish_reason == "tool_limit" and events[-1].text == (
        "I could not finish that request; please try asking in another way.")


# -- upstream failures --------------------------------------------------------------------------


@pytest.mark.parametrize("status, code, answer", [
    (400, "upstream_error", 400), (429, "upstream_error", 429), (500, "upstream_error", 502),
    (401, "upstream_error", 502), (504, "upstream_timeout", 504)])
async def test_upstream_refusals_become_a_typed_error_event(services, fake, owner, status, code,
                                                            answer):
    fake.behaviour = Behaviour(status=status, error_message="nope")
    agent = await add_agent(owner)
    events = await turn(services, owner, agent, "Hi")
    failed = only(events, Failed)
    assert (failed.code, failed.status_code) == (code, answer)
    # the upstream's words when they are about the request; else only what happened
    assert ("nope" in failed.message) == (status in (400, 429))
    assert f"HTTP {status}" in failed.message
    assert events[-1] == Finished("", (), "error")
    await services.usage.drain()
    assert [r["outcome"] for r in await usage_rows()] == ["error"]


@pytest.mark.parametrize("behaviour", [
    Behaviour(first_byte_delay=30), Behaviour(interrupt_after=2, interrupt="stall")],
    ids=["slow-first-byte", "stalls-mid-stream"])
async def test_a_slow_upstream_ends_in_a_timeout_event_not_a_hang(services, fake, owner,
                                                                   behaviour):
    services.pipeline.timeouts = Timeouts(connect=2, read=0.3)
    fake.behaviour = behaviour
    agent = await add_agent(owner)
    events = await turn(services, owner, agent, "Hi")
    failed = only(events, Failed)
    assert (failed.code, failed.status_code) == ("upstream_timeout", 504)
    assert events[-1].finish_reason == "error"


async def test_a_stream_dropped_midway_keeps_the_text_so_far_and_reports_the_error(
        services, fake, owner):
    fake.behaviour = Behaviour(text="abcdefgh", chunks=4, interrupt_after=3, interrupt="drop")
    agent = await add_agent(owner)
    events = await turn(services, owner, agent, "Hi")
    assert text_of(events) == "abcd"
    assert only(events, Failed).code == "upstream_error"
    assert events[-1].text == "abcd" and events[-1].finish_reason == "error"


async def test_an_agent_naming_an_unknown_model_fails_with_model_not_found(services, owner):
    agent = await add_agent(owner, model="gpt-nowhere")
    events = await turn(services, owner, agent, "Hi")
    assert (only(events, Failed).code, only(events, Failed).status_code) == ("model_not_found", 404)


async def test_cancelling_the_consumer_closes_the_upstream_and_counts_a_disconnect(
        services, fake, owner):
    fake.behaviour = Behaviour(chunks=4, interrupt_after=2, interrupt="stall")
    agent_id = await add_agent(owner)
    reach = await reach_of_account(owner, False)
    request = TurnRequest(await load_agent(agent_id, reach), "Hi", reach)
    seen: list[Any] = []
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            async def consume():
                async with aclosing(services.pipeline.run(request)) as events:
                    async for event in events:
                        seen.append(event)
                        if isinstance(event, TextDelta):
                            tasks.cancel_scope.cancel()

            tasks.start_soon(consume)
        await fake.wait_open_connections(0)
    assert isinstance(seen[-1], TextDelta)
    await services.usage.drain()
    [row] = await usage_rows()
    assert row["outcome"] == "client_disconnected" and row["source"] == "app"


# -- the built-in local model ------------------------------------------------------------------


async def test_local_model_answers_extractively_with_citations(services, owner):
    sources = [passage("The clinic opens at 8am on weekdays. Parking is free."),
               passage("A consultation costs 40 euros.", "Prices")]
    services.pipeline.retriever = StaticRetriever(sources)
    agent_id = await add_agent(owner, model="local")
    await Agent.raw("INSERT INTO library (id, name, owner_id) VALUES ({}, 'Docs', {})",
                    sources[0].library_id, owner)
    await Agent.raw("INSERT INTO agent_library (agent_id, library_id) VALUES ({}, {})",
                    agent_id, sources[0].library_id)
    events = await turn(services, owner, agent_id, "How much does a consultation cost?")
    assert events[-1].text == "A consultation costs 40 euros [2]."
    [citation] = only(events, CitationsFound).citations
    assert (citation.number, citation.document_id, citation.title) == (
        2, sources[1].document_id, "Prices")
    missing = await turn(services, owner, agent_id, "Do you sell bicycles?")
    assert missing[-1].text == NOT_FOUND_TEXT and missing[-1].citations == ()
    await services.usage.drain()
    rows = await usage_rows()
    assert {(r["model"], r["provider"], r["outcome"]) for r in rows} == {("local", "local", "ok")}


async def test_local_model_calls_a_tool_by_rule_and_reports_its_result(services, owner):
    agent = await add_agent(owner, model="local", tools=["current_time"])
    events = await turn(services, owner, agent, "What time is it in Europe/Paris?")
    started, finished = only(events, ToolStarted), only(events, ToolFinished)
    assert (started.name, started.arguments) == ("current_time", {"timezone": "Europe/Paris"})
    assert finished.status is ToolStatus.OK
    assert events[-1].text.startswith("It is ") and events[-1].text.endswith("in Europe/Paris.")
    await services.usage.drain()
    assert len(await usage_rows()) == 2  # the call for the tool, then the answer


async def test_local_model_on_a_call_offers_a_message_when_a_tool_is_refused(services, owner):
    async def put_through(arguments):
        return "ringing"

    services.tools.register(ToolSpec("transfer_caller", "Transfer the caller to a person.",
                                     side_effecting=True), put_through)
    agent = await add_agent(owner, model="local", tools=["transfer_caller"])
    events = await turn(services, owner, agent, "Can I speak to a person?",
                        policy=CallToolPolicy(), source="telephone")
    assert only(events, ToolFinished).status is ToolStatus.REFUSED
    assert "take a message" in events[-1].text


async def test_local_model_answers_from_a_real_library_with_citations(services, owner):
    from app.services.accounts import Identity

    account = await services.accounts.find(owner)
    identity = Identity.from_row(account)
    library = await services.libraries.create(identity, name="Clinic")
    document = await services.libraries.add_document(
        identity, library["id"], title="Opening hours", media_type="text/plain",
        content="The clinic opens at 8am on weekdays.\n\nOn Saturdays it opens at 10am.")
    agent_id = await add_agent(owner, model="local")
    await Agent.raw("INSERT INTO agent_library (agent_id, library_id) VALUES ({}, {})",
                    agent_id, uuid.UUID(str(library["id"])))
    events = await turn(services, owner, agent_id, "When does the clinic open on Saturdays?")
    citations = only(events, CitationsFound).citations
    assert "10am" in events[-1].text and citations
    assert str(citations[0].document_id) == str(document["id"])
    assert citations[0].title == "Opening hours"
