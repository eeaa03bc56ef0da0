"""The agent of one telephone conversation: each turn through the pipeline under the
call's rules, the transcript kept.

One implementation for both ways a line is talked to: a call's voice session
(``app.telephony.voice``) feeds it what the recogniser heard, and a conversation in
text (``app.telephony.conversation``) feeds it what an operator typed. Either way the
turn runs as the line's account, with the call's ``CallContext``, the
``CallToolPolicy`` (``telephony.tool_timeout_secs``) and the tools every call offers;
after each turn :meth:`CallAgent.ending` says whether the agent ended the conversation
or put the caller through — only once the screening gate let it through, and only to a
number the line has.
"""

from __future__ import annotations

__all__ = ["NO_ANSWER_TEXT", "CallAgent"]

import logging
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from adapters.voice.session import TurnTimings
from app import db
from app.services.call_context import CallContext
from app.services.chats import Chats
from app.services.pipeline import AgentProfile, Pipeline, TurnRequest
from core.access import Reach
from core.call_outcome import CallInput
from core.pipeline import CallToolPolicy, Failed, Finished, TextDelta, ToolFinished, ToolStarted

log = logging.getLogger("svc.telephony.voice")

#: Said when the agent could not answer a turn; the conversation goes on.
NO_ANSWER_TEXT = "I am sorry, I cannot answer that just now."

_TURN_TIMED = """
INSERT INTO telephony_turn (call_id, asked_ms, first_text_ms, first_audio_ms, finished_ms)
VALUES ($1, $2, $3, $4, $5)
"""


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else max(0, round(seconds * 1000))


@dataclass(eq=False)
class CallAgent:
    """The agent of one call. ``history``: the turns kept so far (a conversation in
    text continues from its transcript); the agent takes the list over and appends
    each turn to it. ``tool_calls`` holds the tools the latest turn asked for: name,
    arguments, how each ended and what the model was told. Neither is in ``repr``,
    nor the context with the caller's number: what a caller said stays out of logs."""

    pipeline: Pipeline
    chats: Chats
    chat_id: UUID
    agent: AgentProfile
    reach: Reach
    policy: CallToolPolicy
    context: CallContext = field(repr=False)
    can_transfer: bool
    history: list[dict[str, str]] = field(default_factory=list, repr=False)
    tool_calls: list[dict[str, Any]] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        # The agent's own copy: it appends each turn, and the caller's list stays as given.
        self.history = [dict(turn) for turn in self.history]

    async def answer(self, transcript: str, waited: float = 0.0) -> AsyncIterator[str]:
        """The turn's words as they come. ``waited``: seconds since the caller stopped
        speaking, where the turn's usage latency counts from."""
        asked_at = time.monotonic() - waited
        await self.chats.append(self.chat_id, "user", transcript)
        request = TurnRequest(self.agent, transcript, self.reach, list(self.history),
                              "telephone", None, self.policy, call=self.context,
                              asked_at=asked_at)
        self.history.append({"role": "user", "content": transcript})
        self.tool_calls = []
        started: dict[str, dict[str, Any]] = {}
        finished: Finished | None = None
        spoken = False
        async with aclosing(self.pipeline.run(request)) as events:
            async for event in events:
                if isinstance(event, TextDelta) and event.text:
                    spoken = True
                    yield event.text
                elif isinstance(event, ToolStarted):
                    started[event.call_id] = {"name": event.name, "arguments": event.arguments}
                elif isinstance(event, ToolFinished):
                    asked = started.pop(event.call_id, {"name": event.name, "arguments": {}})
                    self.tool_calls.append({**asked, "status": event.status.value,
                                            "result": event.content})
                elif isinstance(event, Failed):
                    log.warning("agent turn failed on a call: %s", event.message)
                elif isinstance(event, Finished):
                    finished = event
        text = finished.text if finished is not None and finished.finish_reason != "error" else ""
        if not spoken and self.ending() is None:
            # Silence would leave the caller wondering; a call the agent is ending (or
            # putting through) needs no apology.
            text = NO_ANSWER_TEXT
            yield text
        if text:
            await self.chats.append(self.chat_id, "assistant", text,
                                    finished.citations if finished is not None else ())
            self.history.append({"role": "assistant", "content": text})

    async def timed(self, timings: TurnTimings) -> None:
        """Keep a call's turn timings (a conversation in text has no call to keep them on)."""
        if self.context.call_id is None:
            return
        async with db.connection() as connection:
            await connection.execute(_TURN_TIMED, self.context.call_id, _ms(timings.asked),
                                     _ms(timings.first_text), _ms(timings.first_audio),
                                     _ms(timings.finished))

    def ending(self) -> CallInput | None:
        # spec: "Screening list" — a transfer only once the gate let it through, and
        # only to a number the line has.
        context = self.context
        if context.transfer_requested and context.transfer_allowed and self.can_transfer:
            return CallInput.TRANSFERRED
        if context.end_requested:
            return CallInput.SERVICE_HUNG_UP
        return None
