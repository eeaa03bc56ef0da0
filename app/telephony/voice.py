"""The voice side of an answered call: from a redeemed ticket to the call's outcome.

Both transports end here once a connection presented a valid ticket:
:meth:`CallVoice.redeem` admits it (only while the telephone surface is open — the
404-while-dormant rule, spec: telephony.md "Endpoints"), and :meth:`CallVoice.answer`
runs the call:

1. the line as it is now: greeting, notice, recording, transfer number;
2. the speech engines, the ``voice.phone.*`` dials and the recognition rate; no
   synthesiser means the opening cannot be said: ``notice_failed`` (fail-closed);
3. the call's conversation, kept as a chat with source ``telephone`` for the line's
   account and linked from the call (spec: "Call outcome" — the transcript), opening
   with what the line says first; each answered turn's timings go to
   ``telephony_turn``;
4. the agent: the pipeline with the line's account as the identity, the call's
   ``CallContext`` and ``CallToolPolicy`` (``telephony.tool_timeout_secs``);
5. the recording, when the line records (``adapters.recorder``); a failure marks the
   call ``recording_failed`` and the call goes on;
6. ``adapters.voice.session.run_call``; the moment it decides the end, before our side
   hangs up, the outcome moves through ``CallLog.apply`` — so when the telephone system
   asks the continue question right after, a transfer the screening gate let through is
   already ``transfer_approved`` and ``transferred``, and the line's number is dialled.
   Anything that stops the call before it could speak ends it ``notice_failed``.
"""

from __future__ import annotations

__all__ = ["CallVoice", "EngineSource", "configured_engines", "phone_dials"]

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from uuid import UUID

from adapters.recorder import CallRecorder, RecordingFailed
from adapters.speech.http import SpeechHttp
from adapters.speech.sphinx import LocalRecogniser
from adapters.voice.session import CallSetup, run_call
from adapters.voice.transport import CallEngines, CallTransport
import anyio

from app import db
from app.crypto import SecretBox
from app.services.access import reach_of_account
from app.services.call_context import CallContext
from app.services.chats import Chats
from app.services.pipeline import AgentProfile, Pipeline, call_tool_policy, load_agent
from app.services.settings import Settings, Snapshot
from app.telephony.call_agent import CallAgent
from app.telephony.calls import CallLog
from app.telephony.limits import RedeemedCall, TicketStore
from app.telephony.speech_engines import engines_for_calls
from app.telephony.speech_models import LineSpeechModels
from core.access import Reach
from core.call_outcome import CallInput, CallOutcome
from core.voice import EndCall, PhoneDials, compose_opening
from core.withheld_numbers import is_withheld

log = logging.getLogger("svc.telephony.voice")

#: Builds the engines of one call (``app.telephony.speech_engines``); tests pass fakes.
EngineSource = Callable[[], Awaitable[CallEngines]]

TITLE_PREFIX = "Call from "

_LINE = """
SELECT l.id, l.greeting, l.notice, l.record_calls, l.transfer_e164, o.role AS owner_role
FROM telephony_line l LEFT JOIN account o ON o.id = l.owner_user_id
WHERE l.id = $1
"""
_LINK_CHAT = "UPDATE telephony_call SET chat_id = $2 WHERE id = $1"
_APPROVE_TRANSFER = "UPDATE telephony_call SET transfer_approved = true WHERE id = $1"
_RECORDING_FAILED = "UPDATE telephony_call SET recording_failed = true WHERE id = $1"
def phone_dials(snapshot: Snapshot) -> PhoneDials:
    """The ``voice.phone.*`` dials in force (an unset one follows ``voice.*``)."""
    return PhoneDials(
        silence_threshold_ms=snapshot["voice.phone.silence_threshold_ms"],
        min_speech_ms=snapshot["voice.phone.min_speech_ms"],
        turn_detection=snapshot["voice.phone.turn_detection"],
        speech_rms=snapshot["voice.phone.speech_rms"],
        barge_rms=snapshot["voice.phone.barge_rms"],
        barge_min_ms=snapshot["voice.phone.barge_min_ms"],
    )


def callers_number(reported: str) -> str:
    """The caller's number for the agent's tools; '' when withheld (a carrier's
    marker number for a withheld caller is nobody's number)."""
    return reported if reported.startswith("+") and not is_withheld(reported) else ""


@dataclass
class _Line:
    id: UUID
    greeting: str | None
    notice: str | None
    record_calls: bool
    transfer_e164: str | None
    owner_is_admin: bool


@dataclass(eq=False)
class CallVoice:
    """Admits a call's audio connection and runs its conversation."""

    settings: Settings
    calls: CallLog
    tickets: TicketStore
    pipeline: Pipeline
    chats: Chats
    surface_open: Callable[[], Awaitable[bool]]
    recordings_dir: str
    #: Replaceable: tests give a call instant fake engines.
    engines: EngineSource
    #: The calls this process runs now (``CallLeases.running``): a call of ours in
    #: progress that is not among them is ended ``dropped`` by the lease's sweep.
    running: set[UUID] = field(default_factory=set)
    #: Each line's language model, for the local recogniser (None: the general one).
    speech_models: LineSpeechModels | None = None

    async def redeem(self, token: str) -> RedeemedCall | None:
        """The call a connection's ticket admits it to; None closes it without a word."""
        if not await self.surface_open():
            return None
        return await self.tickets.redeem(token)

    async def answer(self, transport: CallTransport, call: RedeemedCall) -> None:
        """Run the call to its end and record the outcome."""
        self.running.add(call.call_id)
        try:
            await self._answer(transport, call)
        finally:
            # Even when the end could not be written: the lease's sweep ends it.
            self.running.discard(call.call_id)

    async def _answer(self, transport: CallTransport, call: RedeemedCall) -> None:
        recorded: list[CallInput] = []

        async def record(ending: EndCall) -> None:
            recorded.append(ending.given)
            outcome = await self._finish(call.call_id, ending.given)
            log.info("call ended", extra={"call": str(call.call_id), "outcome": outcome.value})

        try:
            prepared = await self._prepare(call)
        except Exception:
            # Nothing can speak on this call (the line, its binding or the speech
            # engines went away): spec "Opening of every call" — fail-closed.
            log.exception("the call could not be prepared")
            with anyio.CancelScope(shield=True):
                await record(EndCall(CallInput.NOTICE_UNAVAILABLE, hang_up=True))
            await transport.hang_up()
            return
        engines, call_agent, setup, record_calls = prepared
        recorder = await self._recorder(call.call_id) if record_calls else None
        try:
            await run_call(transport, engines, call_agent, setup, recorder=recorder,
                           on_recording_failed=lambda: self._recording_failed(call.call_id),
                           on_end=record)
        finally:
            if not recorded:  # a fault of ours ended the session before it decided
                with anyio.CancelScope(shield=True):
                    await record(EndCall(CallInput.MEDIA_LOST, hang_up=False))

    async def _prepare(self, call: RedeemedCall) -> tuple[CallEngines, CallAgent, CallSetup, bool]:
        line = await self._line(call.number_id)
        if line is None or call.agent_id is None or call.owner_id is None:
            raise LookupError("the line or its binding went between answer and audio")
        snapshot = await self.settings.snapshot()
        engines = await self.tuned(await self.engines(), call.agent_id)
        reach = await reach_of_account(call.owner_id, line.owner_is_admin)
        agent = await load_agent(call.agent_id, reach)
        opening = compose_opening(line.greeting, line.notice, recording=line.record_calls)
        chat_id = await self._open_transcript(call, agent, reach, opening)
        context = CallContext(call.call_id, line.id, call.owner_id,
                              callers_number(call.from_number))
        call_agent = CallAgent(self.pipeline, self.chats, chat_id, agent, reach,
                                await call_tool_policy(self.settings), context,
                                bool(line.transfer_e164))
        setup = CallSetup(opening, phone_dials(snapshot), snapshot["voice_live.stt_sample_rate"])
        return engines, call_agent, setup, line.record_calls

    async def tuned(self, engines: CallEngines, agent_id: UUID) -> CallEngines:
        """The engines for a call to the agent's line: the local recogniser listens with
        the line's own model, once one is built; any other engines are left as they are."""
        if self.speech_models is None or not isinstance(engines.recogniser, LocalRecogniser):
            return engines
        model = await self.speech_models.for_call(agent_id)
        return replace(engines, recogniser=engines.recogniser.tuned(model))

    async def _line(self, number_id: UUID | None) -> _Line | None:
        if number_id is None:
            return None
        async with db.connection() as connection:
            row = await connection.fetchrow(_LINE, number_id)
        if row is None:
            return None
        return _Line(row["id"], row["greeting"], row["notice"], row["record_calls"],
                     row["transfer_e164"], row["owner_role"] in ("admin", "superadmin"))

    async def _open_transcript(self, call: RedeemedCall, agent: AgentProfile,
                               reach: Reach, opening: str) -> UUID:
        chat = await self.chats.create(reach, agent.id, source="telephone",
                                       title=f"{TITLE_PREFIX}{call.from_number}"[:200])
        # The transcript reads as the call went: the line's opening first. It is not in
        # the agent's history, which holds the caller's turns and its own answers.
        await self.chats.append(chat["id"], "assistant", opening)
        async with db.connection() as connection:
            await connection.execute(_LINK_CHAT, call.call_id, chat["id"])
        return chat["id"]

    async def _recorder(self, call_id: UUID) -> CallRecorder | None:
        try:
            return CallRecorder.create(self.recordings_dir, call_id)
        except RecordingFailed:
            log.exception("the recording could not be started")
            await self._recording_failed(call_id)
            return None

    async def _recording_failed(self, call_id: UUID) -> None:
        async with db.connection() as connection:
            await connection.execute(_RECORDING_FAILED, call_id)

    async def _finish(self, call_id: UUID, given: CallInput) -> CallOutcome:
        if given is CallInput.TRANSFERRED:
            async with db.connection() as connection:
                await connection.execute(_APPROVE_TRANSFER, call_id)
        return await self.calls.apply(call_id, given)


def configured_engines(settings: Settings, box: SecretBox,
                       http: SpeechHttp | None = None) -> EngineSource:
    """The engines the ``voice_live.*`` settings name, built afresh for each call over
    the process's pool of speech connections."""

    async def build() -> CallEngines:
        return await engines_for_calls(settings, box, http=http)

    return build
