"""Agent calls over ``/v1``: ``model: agent/<id>`` runs the agent pipeline, answered in
the chat-completions protocol; the built-in ``local`` model answers the same way.

spec: public-api.md "Chat completion request", "Continuation header"; DESIGN.md "/v1
protocol". For an agent the last user message is the question and earlier messages
are ignored: the conversation is the one kept on the service. Every agent reply
carries ``X-Service-Chat-Id``; sent back, it continues that conversation (only the
caller's own, with the same agent — anything else is 404 ``chat_not_found``), and
without it each call starts a new conversation (source ``api``: kept, left out of the
chat list). Citations go in the message as ``annotations`` (``url_citation``) and at
the top level as ``citations`` — in the final chunk when streaming; their links start
with ``server.public_url``, or else the origin the request came to.

Generation parameters (``core.generation``) go to the agent's model with every call
of the turn; what the model cannot honour is refused by name — before anything runs
for the built-in ``local`` model, as the upstream's own refusal otherwise. A JSON
``response_format`` keeps citation markers out of the answer: its citations travel
only in ``annotations``. Answers carry a ``system_fingerprint`` that changes when the
agent's configuration or the service's version does.

Checks come before the rate limit, so a refused request never uses up the quota.
Streamed and non-streamed answers are built from the same text pieces, so they give
the same text. While retrieval or tools run before the first token, a streamed answer
sends keep-alive comments. The status line and headers go out with the first frame:
a failure before it is an HTTP error status (so the SDKs' retries apply), a failure
after it an ``error`` frame and ``[DONE]``. A non-streamed failure after a side-effecting tool ran says
``x-should-retry: false``: the SDKs retry 5xx on their own and would do it again.
"""

from __future__ import annotations

__all__ = ["AGENT_PREFIX", "CHAT_HEADER", "KEEP_ALIVE_SECONDS", "answer", "answer_local"]

import hashlib
import logging
import time
import uuid
from importlib import metadata
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from blacksheep import Request, Response, StreamedContent

from app.bundle import Services
from app.errors import BadRequest, NotFound
from app.http.disconnect import cancelled_on_disconnect
from app.http.errors import HttpRefusal, header_pairs, json_response
from app.http.event_pump import IDLE, Idle, pumped
from app.http.middleware import arrived_at
from app.public_api.auth import admit
from app.public_api.links import public_base
from app.services.access import reach_of
from app.services.accounts import Identity
from app.services.chats import MAX_CONTENT_CHARS
from app.services.pipeline import AgentProfile, TurnRequest, load_agent
from app.services.providers import LOCAL, ModelNotFound
from core.access import Reach
from core.chat_request import ChatRequest, ChatRequestError, question_of
from core.generation import (
    GenerationError,
    GenerationOptions,
    local_refusal,
    read_generation_options,
)
from core.pipeline import (
    Citation,
    Failed,
    Finished,
    PipelineEvent,
    TextDelta,
    ToolFinished,
    ToolStatus,
    url_annotations,
    whole_answer_annotations,
)
from core.sse import ChunkEncoder, EncoderState, assemble_completion

log = logging.getLogger("svc.v1")

AGENT_PREFIX = "agent/"
CHAT_HEADER = "X-Service-Chat-Id"
#: Silence allowed on a streamed answer before a keep-alive comment goes out; well
#: under the idle timeouts of common proxies (60 s).
KEEP_ALIVE_SECONDS = 5.0
# The local model outside any agent: no instructions, no Libraries, no tools.
_LOCAL_AGENT = AgentProfile(uuid.UUID(int=0), LOCAL, "", LOCAL)
# The pipeline's own finish reasons, in the protocol's words: a turn stopped by the
# step budget is an answer cut short by a limit.
_FINISH_REASONS = {"stop": "stop", "length": "length", "tool_limit": "length"}
_VERSION = metadata.version("svc")


class ChatNotFound(NotFound, code="chat_not_found"):
    """The conversation asked for is not there, or not the caller's."""


def _question(chat: ChatRequest) -> str:
    try:
        question = question_of(chat.messages)
    except ChatRequestError as exc:
        raise _refused(exc) from None
    if len(question) > MAX_CONTENT_CHARS:
        raise BadRequest(f"The question (the last user message) may have at most "
                         f"{MAX_CONTENT_CHARS} characters.", code="invalid_request_error",
                         field="messages")
    return question


def _refused(exc: ChatRequestError) -> BadRequest:
    return BadRequest(exc.message, code=exc.code, field=exc.param)


def _generation(chat: ChatRequest, model: str) -> GenerationOptions:
    """The request's generation parameters, checked against what ``model`` honours."""
    try:
        options = read_generation_options(chat.body)
    except GenerationError as exc:
        raise _refused(exc) from None
    refusal = local_refusal(options) if model == LOCAL else None
    if refusal is not None:
        raise _refused(refusal)
    return options


def system_fingerprint(agent: AgentProfile) -> str:
    """``fp_`` and ten hex digits: the same while the agent's configuration and the
    service's version stay the same, as OpenAI's names a model's serving setup."""
    parts = (_VERSION, str(agent.id), agent.model, agent.instructions, *agent.tools,
             *(str(library) for library in agent.library_ids))
    return "fp_" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:10]


async def _agent(model: str, reach: Reach) -> AgentProfile:
    try:
        return await load_agent(model[len(AGENT_PREFIX):], reach)
    except NotFound:
        # The same words whether the agent does not exist or is not the caller's.
        raise ModelNotFound(f"The model {model!r} does not exist or you do not have "
                            "access to it.", field="model") from None


async def _continued_chat(request: Request, svc: Services, reach: Reach,
                          agent: AgentProfile) -> uuid.UUID | None:
    """The conversation named by ``X-Service-Chat-Id``, if one was sent."""
    given = request.get_first_header(CHAT_HEADER.encode())
    if given is None:
        return None
    chat_id = given.decode("latin-1").strip()
    refusal = ChatNotFound(f"No conversation {chat_id!r} of yours with "
                           f"{AGENT_PREFIX}{agent.id}. Leave out {CHAT_HEADER} to start one.")
    try:
        row = await svc.chats.find(reach, chat_id, owner_only=True)
    except NotFound:
        raise refusal from None
    if row["agent_id"] != agent.id:
        raise refusal
    return row["id"]


async def answer(request: Request, svc: Services, identity: Identity,
                 chat: ChatRequest) -> Response:
    """``model: agent/<id>``: one turn of a kept conversation with the agent."""
    reach = await reach_of(identity)
    question = _question(chat)
    agent = await _agent(chat.model, reach)
    generation = _generation(chat, agent.model)
    chat_id = await _continued_chat(request, svc, reach, agent)
    headers = await admit(svc, identity)
    if chat_id is None:
        chat_id = (await svc.chats.create_api_chat(reach, agent.id, identity.api_key_id))["id"]
    headers[CHAT_HEADER] = str(chat_id)
    tools = await svc.tools.for_agent(agent.tools)
    events = await svc.chats.send(reach, chat_id, question, source="api",
                                  api_key_id=identity.api_key_id, owner_only=True,
                                  generation=generation, asked_at=arrived_at(request))
    reply = _Reply(chat.model, frozenset(t.spec.name for t in tools if t.spec.side_effecting),
                   public_base(request, svc.boot), generation.wants_json,
                   system_fingerprint(agent))
    return await _respond(request, chat, events, reply, headers)


async def answer_local(request: Request, svc: Services, identity: Identity,
                       chat: ChatRequest) -> Response:
    """``model: local``: the built-in model, called like a provider model. Nothing is
    kept but usage; the question is the last user message, as for an agent."""
    question = _question(chat)
    generation = _generation(chat, LOCAL)
    headers = await admit(svc, identity)
    turn = TurnRequest(_LOCAL_AGENT, question, await reach_of(identity), source="api",
                       api_key_id=identity.api_key_id, generation=generation,
                       asked_at=arrived_at(request))
    reply = _Reply(chat.model, frozenset(), public_base(request, svc.boot), False,
                   system_fingerprint(_LOCAL_AGENT))
    return await _respond(request, chat, svc.pipeline.run(turn), reply, headers)


@dataclass(eq=False)
class _Reply:
    """One answer as its events arrive: the text pieces, how it ended, and whether a
    tool with effects outside ran (then a retry would do it again)."""

    model: str  #: as the caller named it; every chunk and the completion repeat it
    side_effecting: frozenset[str]
    public_url: str
    #: the answer is JSON: citations are not marked in it, only listed beside it
    json_answer: bool
    fingerprint: str
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex}")
    created: int = field(default_factory=lambda: int(time.time()))
    pieces: list[str] = field(default_factory=list)
    failure: Failed | None = None
    finished: Finished | None = None
    side_effect_ran: bool = False

    def observe(self, event: PipelineEvent) -> None:
        if isinstance(event, TextDelta):
            self.pieces.append(event.text)
        elif isinstance(event, ToolFinished):
            # Refused means it never ran; a time-out or a failure may still have acted.
            if event.name in self.side_effecting and event.status is not ToolStatus.REFUSED:
                self.side_effect_ran = True
        elif isinstance(event, Failed):
            self.failure = event
        elif isinstance(event, Finished):
            self.finished = event

    @property
    def finish_reason(self) -> str:
        assert self.finished is not None
        return _FINISH_REASONS.get(self.finished.finish_reason, "stop")

    def usage(self) -> dict[str, int]:
        assert self.finished is not None
        prompt, completion = self.finished.prompt_tokens, self.finished.completion_tokens
        return {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion}

    def _url_of(self, citation: Citation) -> str:
        return (f"{self.public_url}/api/libraries/{citation.library_id}"
                f"/documents/{citation.document_id}")

    def citations(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The message's ``annotations`` and the top-level ``citations``."""
        assert self.finished is not None
        cited = self.finished.citations
        annotate = whole_answer_annotations if self.json_answer else url_annotations
        return ({"annotations": annotate(self.finished.text, cited, self._url_of)},
                {"citations": [citation.as_json() for citation in cited]})

    def failure_error(self, headers: dict[str, str]) -> HttpRefusal:
        failure = self.failure or Failed("internal_error", "The answer did not finish.", 500)
        status, code, message = failure.status_code, failure.code, failure.message
        if code == "model_not_found":
            # The agent names a model that is gone: the service's fault, not the caller's.
            status, code = 502, "agent_model_unavailable"
            message = f"This agent's model is not available: {message}"
        if status >= 500 and self.side_effect_ran:
            headers = {**headers, "x-should-retry": "false"}
        return HttpRefusal(message, code=code, field=failure.param, status=status,
                           headers=headers)


async def _respond(request: Request, chat: ChatRequest, events: AsyncIterator[PipelineEvent],
                   reply: _Reply, headers: dict[str, str]) -> Response:
    if chat.stream:
        return await _streamed(request, chat, events, reply, headers)
    async with aclosing(events) as stream:
        with cancelled_on_disconnect(request) as watch:
            async for event in stream:
                reply.observe(event)
    if watch.disconnected:
        return Response(499)  # nobody is listening; the status is for the log only
    if reply.failure is not None or reply.finished is None:
        raise reply.failure_error(headers)
    message_extra, completion_extra = reply.citations()
    return json_response(200, assemble_completion(
        id=reply.id, created=reply.created, model=reply.model, pieces=reply.pieces,
        finish_reason=reply.finish_reason, usage=reply.usage(), message_extra=message_extra,
        completion_extra=completion_extra, system_fingerprint=reply.fingerprint), headers)


async def _streamed(request: Request, chat: ChatRequest, events: AsyncIterator[PipelineEvent],
                    reply: _Reply, headers: dict[str, str]) -> Response:
    encoder = ChunkEncoder(id=reply.id, created=reply.created, model=reply.model,
                           include_usage=chat.include_usage,
                           system_fingerprint=reply.fingerprint)

    def frames_for(event: PipelineEvent) -> bytes:
        reply.observe(event)
        if isinstance(event, TextDelta):
            return encoder.content(event.text)
        if isinstance(event, Failed):
            return encoder.error(event.message, code=event.code)
        if isinstance(event, Finished):
            if encoder.state is EncoderState.ERRORED:
                return encoder.done()
            message_extra, completion_extra = reply.citations()
            return (encoder.finish(reply.finish_reason, extra=message_extra,
                                   chunk_extra=completion_extra)
                    + encoder.usage(reply.usage()) + encoder.done())
        return b""  # tool and usage events stay inside the service

    async def opening(items: AsyncIterator[PipelineEvent | Idle]) -> bytes:
        """The first bytes to send; a failure before them is raised as an HTTP error."""
        async for item in items:
            if item is IDLE:
                return encoder.keep_alive()
            if isinstance(item, Failed):
                reply.observe(item)
                raise reply.failure_error(headers)
            frames = frames_for(item)
            if frames:
                return frames
        return b""

    items = pumped(events, request, KEEP_ALIVE_SECONDS)
    try:
        first = await opening(items)
    except BaseException:
        await items.aclose()
        raise

    async def body() -> AsyncIterator[bytes]:
        try:
            async with aclosing(items):
                if first:
                    yield first
                if encoder.state is EncoderState.DONE:
                    return
                async for item in items:
                    frames = encoder.keep_alive() if item is IDLE else frames_for(item)
                    if frames:
                        yield frames
                    if encoder.state is EncoderState.DONE:
                        return
        except Exception:
            log.exception("streamed agent answer failed")
            if encoder.state in (EncoderState.IDLE, EncoderState.STREAMING,
                                 EncoderState.FINISHED):
                yield encoder.error("Something went wrong on our side.",
                                    code="internal_error") + encoder.done()

    return Response(200, header_pairs({**headers, "Cache-Control": "no-cache",
                                       "X-Accel-Buffering": "no"}),
                    StreamedContent(b"text/event-stream", body))
