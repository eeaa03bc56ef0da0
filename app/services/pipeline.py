"""The agent pipeline: one implementation for every caller (chats, ``/v1``, telephone).

``Pipeline.run(TurnRequest)`` is an async iterator of ``core.pipeline`` events:

1. retrieve passages from the agent's Libraries (``Retriever``, the Libraries search);
2. build the messages (instructions, numbered passages, the kept conversation, the
   question — ``core.pipeline.build_messages``);
3. call the model the agent names, streamed: an upstream through ``Providers.resolve``
   and ``ProviderClient.stream``, or the built-in ``local`` model (``core.local_model``)
   fed through the same reply assembly;
4. run the tools it asks for under the caller's ``ToolPolicy`` (refusals, a per-tool
   time ceiling, failures all told to the model) and call it again, within a step
   budget;
5. map the answer's ``[n]`` markers to citations.

Every model call is recorded through ``Usage.record`` in a ``finally``: a stream the
consumer abandons still counts, as ``client_disconnected`` (its tokens estimated when
the upstream had not counted them yet: the chunks received, and the messages' text at
four characters a token). Cancelling the consumer
(or closing the iterator) leaves the upstream request's context at once, which
closes its connection. Consume it as ``async with aclosing(pipeline.run(r)) as events``.
"""

from __future__ import annotations

__all__ = ["AgentProfile", "Pipeline", "Retriever", "TurnRequest", "call_tool_policy",
           "load_agent"]

import datetime as dt
import json
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol
from uuid import UUID

import anyio

from adapters.providers import ProviderClient, Timeouts, UpstreamError
from app.errors import NotFound
from app.services.access import parse_id, require
from app.services.call_context import CallContext
from app.services.providers import ModelNotFound, Providers, ResolvedModel
from app.services.settings import Settings
from app.services.builtin_tools import ON_EVERY_CALL
from app.services.tools import Tool, ToolRegistry
from app.services.usage import Usage, UsageRecord
from app.tables import Agent, AgentLibrary
from core.access import Reach
from core.chat_request import estimated_prompt_tokens
from core.generation import GenerationOptions, cut_answer
from core.local_model import LocalToolCall, LocalTurn, respond, word_count
from core.passages import Passage
from core.pipeline import (
    STEP_LIMIT_TEXT,
    AppToolPolicy,
    CallToolPolicy,
    CitationsFound,
    Failed,
    Finished,
    PipelineEvent,
    ReplyAssembler,
    RequestedCall,
    StepBudget,
    TextDelta,
    ToolFailed,
    ToolFinished,
    ToolPolicy,
    ToolStarted,
    ToolStatus,
    UsageCounted,
    assistant_tool_message,
    build_messages,
    check_arguments,
    consulted_citations,
    failure_text,
    map_citations,
    parse_arguments,
    result_text,
    tool_result_message,
)
from core.records import frozen

log = logging.getLogger("svc.pipeline")


class Retriever(Protocol):
    """The Libraries search the pipeline retrieves through (``svc.libraries``)."""

    async def search(self, reach: Reach, library_ids: Sequence[UUID], query: str, *,
                     limit: int = 6) -> list[Passage]: ...


class CallClock(Protocol):
    """The time a call's local model reads days and times against: the diary's clock
    and the zone of the line owner's diary (``svc.diary.clock``)."""

    def now(self) -> dt.datetime: ...

    async def zone(self, account_id: UUID) -> dt.tzinfo: ...


@frozen
class AgentProfile:
    """What the pipeline needs of an agent row."""

    id: UUID
    name: str
    instructions: str
    model: str
    tools: tuple[str, ...] = ()
    library_ids: tuple[UUID, ...] = ()


async def load_agent(agent_id: str | UUID, reach: Reach) -> AgentProfile:
    """The agent if ``reach`` covers it and it is not archived; 404 otherwise."""
    row = await Agent.select().where(Agent.id == parse_id(agent_id, "agent")).first()
    row = require(reach, row, "agent")
    if row["archived_at"] is not None:
        raise NotFound("No such agent.")
    links = await AgentLibrary.select(AgentLibrary.library_id).where(
        AgentLibrary.agent_id == row["id"])
    return AgentProfile(row["id"], row["name"], row["instructions"], row["model"],
                        tuple(row["tools"] or ()), tuple(link["library_id"] for link in links))


async def call_tool_policy(settings: Settings) -> CallToolPolicy:
    """The policy of a telephone call, with the ceiling ``telephony.tool_timeout_secs``."""
    return CallToolPolicy(float(await settings.get("telephony.tool_timeout_secs")))


@frozen
class TurnRequest:
    """One question to an agent. ``reach`` is whose access retrieval uses (and whose
    provider key and usage row the call is); ``history`` the kept conversation;
    ``call`` the telephone call the turn belongs to (None outside calls), handed to the
    tools that declared they want it. ``generation``: the caller's generation
    parameters, sent with every model call of the turn. ``asked_at``: when the
    question was complete, on ``time.monotonic`` (the request arriving; on a call, the
    end of the caller's speech): each usage row's latency counts from it, so it covers
    the whole turn up to that model call's end, not only the model's own time."""

    agent: AgentProfile
    question: str
    reach: Reach
    history: Sequence[Mapping[str, Any]] = ()
    source: str = "app"
    api_key_id: UUID | None = None
    policy: ToolPolicy = field(default_factory=AppToolPolicy)
    call: CallContext | None = None
    generation: GenerationOptions = field(default_factory=GenerationOptions)
    asked_at: float = field(default_factory=time.monotonic)


@dataclass(eq=False)
class _Run:
    """The state of one run as it goes through its steps."""

    request: TurnRequest
    model: ResolvedModel
    passages: list[Passage]
    tools: dict[str, Tool]
    messages: list[dict[str, Any]]
    budget: StepBudget
    reply: ReplyAssembler = field(default_factory=ReplyAssembler)
    text: list[str] = field(default_factory=list)
    tool_results: list[ToolFinished] = field(default_factory=list)
    failure: Failed | None = None
    #: on a call, the diary's zone: the local model reads days and times in it
    zone: dt.tzinfo | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _StartFailed(Exception):
    """The turn cannot start; ``failure`` is the event that says why."""

    def __init__(self, failure: Failed) -> None:
        super().__init__(failure.message)
        self.failure = failure


def _failure(exc: UpstreamError, forwarded: Mapping[str, Any]) -> Failed:
    code = {504: "upstream_timeout"}.get(exc.status_code, "upstream_error")
    param = _refused_param(exc, forwarded) if exc.status_code in (400, 422) else None
    if param is not None:
        # The model refused a parameter the caller chose: the caller's to change.
        return Failed("unsupported_parameter", f"This agent's model does not accept "
                      f"{param}: {exc.message} Leave {param} out of the request.", 400, param)
    return Failed(code, f"The model did not answer: {exc.public}", exc.status_code)


def _refused_param(exc: UpstreamError, forwarded: Mapping[str, Any]) -> str | None:
    """Which of the caller's parameters an upstream refusal is about: the error body's
    ``param`` when it names one, else the first one its message mentions."""
    named = None
    body = getattr(exc, "body", b"")
    try:
        error = json.loads(body).get("error") if body else None
        named = error.get("param") if isinstance(error, dict) else None
    except (ValueError, AttributeError, RecursionError):
        pass
    if isinstance(named, str) and named in forwarded:
        return named
    return next((name for name in forwarded if name in exc.message), None)


@dataclass(eq=False)
class Pipeline:
    """Runs agent turns."""

    providers: Providers
    client: ProviderClient
    usage: Usage
    tools: ToolRegistry
    retriever: Retriever | None = None
    _: KW_ONLY
    #: "now" for the local model on a call: the diary's clock, in the diary's zone
    clock: CallClock
    #: bounds the wait for an upstream (``read`` is the longest silence allowed mid-stream)
    timeouts: Timeouts = Timeouts(connect=10.0, read=120.0)
    #: the model calls of one turn
    max_steps: int = 4
    #: how many passages one question retrieves from the agent's Libraries
    passages: int = 6

    async def run(self, request: TurnRequest) -> AsyncIterator[PipelineEvent]:
        """The events of one turn; the last is always ``Finished``."""
        try:
            run = await self._prepare(request)
        except _StartFailed as exc:
            yield exc.failure
            yield Finished("", (), "error")
            return
        async with aclosing(self._steps(run)) as events:
            async for event in events:
                yield event

    async def _prepare(self, request: TurnRequest) -> _Run:
        agent = request.agent
        try:
            model = await self.providers.resolve(agent.model, request.reach.account_id)
        except ModelNotFound as exc:
            raise _StartFailed(Failed("model_not_found", exc.message, 404)) from None
        passages = await self._retrieve(request)
        names = agent.tools + ON_EVERY_CALL if request.call is not None else agent.tools
        tools = {tool.spec.name: tool for tool in await self.tools.for_agent(names)}
        messages = build_messages(agent.instructions, passages, request.history, request.question,
                                  json_answer=request.generation.wants_json)
        zone = await self.clock.zone(request.call.account_id) \
            if model.is_local and request.call is not None else None
        return _Run(request, model, passages, tools, messages, StepBudget(self.max_steps),
                    zone=zone)

    async def _retrieve(self, request: TurnRequest) -> list[Passage]:
        library_ids = request.agent.library_ids
        if self.retriever is None or not library_ids:
            return []
        try:
            return await self.retriever.search(request.reach, library_ids, request.question,
                                               limit=self.passages)
        except Exception:
            # An answer without the documents would read as grounded when it is not.
            log.exception("retrieval failed", extra={"agent": str(request.agent.id)})
            raise _StartFailed(Failed("retrieval_failed",
                                      "Searching the agent's Libraries failed.", 502)) from None

    async def _steps(self, run: _Run) -> AsyncIterator[PipelineEvent]:
        finish_reason = "stop"
        while True:
            tool_choice = run.budget.start_step()
            run.reply = ReplyAssembler()
            step = self._local_step if run.model.is_local else self._upstream_step
            async with aclosing(step(run, tool_choice)) as events:
                async for event in events:
                    yield event
            if run.failure is not None:
                yield run.failure
                yield Finished("".join(run.text), (), "error", run.prompt_tokens,
                               run.completion_tokens)
                return
            calls = run.reply.tool_calls
            if not calls:
                if run.reply.finish_reason == "length":
                    finish_reason = "length"  # cut by the caller's max_tokens
                break
            if run.budget.exhausted:
                finish_reason = "tool_limit"
                if not "".join(run.text).strip():
                    run.text.append(STEP_LIMIT_TEXT)
                    yield TextDelta(STEP_LIMIT_TEXT)
                break
            async with aclosing(self._run_tools(run, calls)) as events:
                async for event in events:
                    yield event
        text = "".join(run.text)
        citations = (consulted_citations(run.passages) if run.request.generation.wants_json
                     else map_citations(text, run.passages))
        yield CitationsFound(citations)
        yield Finished(text, citations, finish_reason, run.prompt_tokens, run.completion_tokens)

    # -- model calls ------------------------------------------------------------------

    def _record(self, run: _Run, started: float, outcome: str) -> UsageCounted:
        now, request = time.monotonic(), run.request
        counted = UsageCounted(run.model.model, run.model.provider, run.reply.prompt_tokens,
                               run.reply.completion_tokens, round((now - started) * 1000))
        self.usage.record(UsageRecord(
            account_id=request.reach.account_id, api_key_id=request.api_key_id,
            model=counted.model, provider=counted.provider, source=request.source,
            outcome=outcome, prompt_tokens=counted.prompt_tokens,
            completion_tokens=counted.completion_tokens,
            latency_ms=max(0, round((now - request.asked_at) * 1000)),
            line_id=request.call.line_id if request.call is not None else None))
        run.prompt_tokens += counted.prompt_tokens
        run.completion_tokens += counted.completion_tokens
        return counted

    async def _upstream_step(self, run: _Run, tool_choice: str) -> AsyncIterator[PipelineEvent]:
        body: dict[str, Any] = {**run.request.generation.forwarded, "model": run.model.model,
                                "messages": run.messages,
                                "stream_options": {"include_usage": True}}
        if run.tools:
            body["tools"] = [tool.spec.openai_spec() for tool in run.tools.values()]
            body["tool_choice"] = tool_choice
        started = time.monotonic()
        # Anything that leaves this block without setting another outcome is the
        # consumer going away: a cancelled task or a closed iterator.
        outcome = "client_disconnected"
        try:
            assert run.model.upstream is not None
            async with self.client.stream(run.model.upstream, body,
                                          timeouts=self.timeouts) as chunks:
                async for chunk in chunks:
                    text = run.reply.feed(chunk)
                    if text:
                        run.text.append(text)
                        yield TextDelta(text)
            outcome = "ok"
        except UpstreamError as exc:
            outcome, run.failure = "error", _failure(exc, run.request.generation.forwarded)
        except Exception:
            outcome = "error"
            raise
        finally:
            if outcome == "client_disconnected" and not run.reply.counted:
                # Gone before the upstream counted: what was sent and what came, estimated.
                run.reply.prompt_tokens = estimated_prompt_tokens(run.messages)
                run.reply.completion_tokens = run.reply.chunks
            counted = self._record(run, started, outcome)
        if outcome == "ok":
            yield counted

    async def _local_step(self, run: _Run, tool_choice: str) -> AsyncIterator[PipelineEvent]:
        request = run.request
        offered = [tool.spec for tool in run.tools.values()] if tool_choice == "auto" else []
        # On a call the local model holds the conversation: it reads the earlier turns
        # and the day in the diary's zone (core has no clock).
        now = self.clock.now().astimezone(run.zone) if run.zone is not None else None
        # In a worker thread: reading days loads dateparser's language data on its first
        # use (about a second), which on the event loop would stall every call's audio.
        decision = await anyio.to_thread.run_sync(respond, LocalTurn(
            request.question, run.passages, offered, run.tool_results,
            request.history if now is not None else (), now,
            bool(request.call and request.call.caller_number)))
        started, outcome = time.monotonic(), "client_disconnected"
        prompt = word_count(request.question) + sum(word_count(p.text) for p in run.passages)
        try:
            if isinstance(decision, LocalToolCall):
                entry = {"index": 0, "id": f"local_{run.budget.steps_taken}",
                         "function": {"name": decision.name,
                                      "arguments": json.dumps(decision.arguments)}}
                run.reply.feed(_local_chunk({"tool_calls": [entry]}, "tool_calls"))
            else:
                text, finish_reason = cut_answer(decision.text, request.generation)
                for piece in _sentences_of(text):
                    run.reply.feed(_local_chunk({"content": piece}))
                    run.text.append(piece)
                    yield TextDelta(piece)
                run.reply.feed(_local_chunk({}, finish_reason))
            run.reply.feed({"choices": [], "usage": {
                "prompt_tokens": prompt, "completion_tokens": word_count(run.reply.text)}})
            outcome = "ok"
        finally:
            counted = self._record(run, started, outcome)
        yield counted

    # -- tools ---------------------------------------------------------------------------

    async def _run_tools(self, run: _Run, calls: list[RequestedCall]) -> AsyncIterator[PipelineEvent]:
        run.messages.append(assistant_tool_message(run.reply.text, calls))
        to_run, skipped = run.budget.split_calls(calls)
        for call in to_run:
            arguments = parse_arguments(call.arguments)
            yield ToolStarted(call.id, call.name, arguments if isinstance(arguments, dict) else {})
            finished = await self._run_one(run, call, arguments)
            run.tool_results.append(finished)
            run.messages.append(tool_result_message(call.id, finished.content))
            yield finished
        for call in skipped:  # every call in the reply needs an answer, or the model errs
            run.messages.append(tool_result_message(
                call.id, "Not run: too many tool calls at once. Ask for fewer."))

    async def _run_one(self, run: _Run, call: RequestedCall,
                       arguments: dict[str, Any] | str) -> ToolFinished:
        def ended(status: ToolStatus, content: str) -> ToolFinished:
            return ToolFinished(call.id, call.name, status, content)

        tool = run.tools.get(call.name)
        if tool is None:
            return ended(ToolStatus.ERROR, f"There is no tool named {call.name}. Answer without it.")
        if isinstance(arguments, str):
            return ended(ToolStatus.ERROR, arguments)
        policy = run.request.policy
        refusal = policy.check(tool.spec)
        if refusal is not None:
            return ended(ToolStatus.REFUSED, refusal)
        problem = check_arguments(tool.spec, arguments)
        if problem is not None:
            return ended(ToolStatus.ERROR, problem)
        try:
            with anyio.fail_after(policy.timeout_seconds):
                value = await tool.invoke(arguments, run.request.call)
        except TimeoutError:
            return ended(ToolStatus.TIMEOUT, policy.timeout_text(tool.spec))
        except ToolFailed as exc:
            return ended(ToolStatus.ERROR, failure_text(call.name, str(exc)))
        except Exception:
            log.exception("tool failed", extra={"tool": call.name})
            return ended(ToolStatus.ERROR, failure_text(call.name, "it raised an unexpected error"))
        text = result_text(value)
        if text is None:
            return ended(ToolStatus.ERROR, failure_text(call.name, "it returned unreadable data"))
        return ended(ToolStatus.OK, text)


def _local_chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


def _sentences_of(text: str) -> list[str]:
    """The local answer in sentence pieces, so it streams like any other model's."""
    pieces, start = [], 0
    for index, char in enumerate(text):
        if char in ".?!" and (index + 1 == len(text) or text[index + 1] == " "):
            pieces.append(text[start:index + 1])
            start = index + 1
    if start < len(text):
        pieces.append(text[start:])
    return pieces
