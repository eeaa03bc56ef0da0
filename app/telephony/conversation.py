"""Talking to a line in text: an operator tries a line's agent without a telephone.

``POST /api/lines/{id}/conversation`` sends one turn; the answer is what the agent
would have said on a call, and the tools it used. The turn runs through the same
``CallAgent`` a call's voice session uses, so exactly the rules of a call hold: the
line's account is the identity, only the tools every call offers plus the agent's
own, side-effecting tools not marked for calls refused, each tool under
``telephony.tool_timeout_secs``, and putting through only past the screening gate and
to the line's transfer number. What its tools book or take is real, as on a call,
linked to no call in the log (``CallContext.call_id`` is None).

Who may: the line's account and administrators; anyone else gets 404, as for a line
that does not exist. The line is checked as a call would check it
(``core.refusals.binding_refusal``: switched on, agent callable, account active), and
the telephone feature must be on for the line's account; a refusal is 409 with the
reason as its code. Each turn is audited ``telephony.line.talked``.

A conversation keeps what a call keeps between turns (``line_conversation``): the
transcript as a chat of the line's account, refused change attempts and the screening
verdict. Once the agent ends it or puts the caller through, it takes no more turns
(409 ``conversation_ended``). One turn runs at a time (409 ``conversation_busy``).
"""

from __future__ import annotations

__all__ = ["LineConversations", "MAX_TURN_CHARS"]

from typing import Any
from uuid import UUID

from app import db
from app.errors import Conflict, NotFound
from app.services.access import owner_or_admin, parse_id, reach_of_account
from app.services.accounts import Identity
from app.services.audit import AuditLog
from app.services.chats import Chats
from app.services.pipeline import Pipeline, call_tool_policy, load_agent
from app.services.settings import Settings
from app.telephony.admission import LINE_FACTS
from app.telephony.call_agent import CallAgent
from app.services.call_context import CallContext
from app.telephony.features import FeatureFlags
from core.access import Reach
from core.call_outcome import CallInput
from core.ids import id_or_none
from core.refusals import binding_refusal

#: A spoken turn is a sentence or two; a typed one is held to a generous paragraph.
MAX_TURN_CHARS = 2000
#: How long one turn may hold its conversation; a process that stopped mid-turn
#: frees it when this passes.
TURN_HOLD = "5 minutes"
TITLE_PREFIX = "Text conversation on "

_LINE = LINE_FACTS + "WHERE l.id = $1"
_FIND = """
SELECT id, chat_id, ended FROM line_conversation
WHERE id = $1 AND line_id = $2 AND operator_id = $3
"""
_CREATE = """
INSERT INTO line_conversation (line_id, chat_id, operator_id) VALUES ($1, $2, $3)
RETURNING id, chat_id, ended
"""
_CLAIM = f"""
UPDATE line_conversation SET busy_until = now() + interval '{TURN_HOLD}'
WHERE id = $1 AND ended IS NULL AND (busy_until IS NULL OR busy_until < now())
RETURNING change_attempts, caller_verdict
"""
_RELEASE = """
UPDATE line_conversation
SET busy_until = NULL, change_attempts = $2, caller_verdict = $3, ended = $4, updated_at = now()
WHERE id = $1
"""

_ENDED: dict[CallInput | None, str] = {CallInput.TRANSFERRED: "transferred",
                                       CallInput.SERVICE_HUNG_UP: "completed"}


class LineConversations:
    def __init__(self, settings: Settings, features: FeatureFlags, pipeline: Pipeline,
                 chats: Chats, audit: AuditLog) -> None:
        self.settings = settings
        self.features = features
        self.pipeline = pipeline
        self.chats = chats
        self.audit = audit

    async def turn(self, identity: Identity, line_id: str, text: str,
                   conversation_id: str | None) -> dict[str, Any]:
        """One turn of ``identity``'s conversation with the line (a new one without
        ``conversation_id``): the agent's reply and the tools it used."""
        line = await self._line(identity, line_id)
        reach = await reach_of_account(line["owner_user_id"],
                                       line["owner_role"] in ("admin", "superadmin"))
        try:
            agent = await load_agent(line["agent_id"], reach)
        except NotFound:  # the account no longer reaches the agent: no call could start
            raise Conflict("The line's agent cannot be called.",
                           code="agent_unavailable") from None
        conversation = await self._conversation(identity, line, agent.id, reach,
                                                conversation_id)
        context = await self._claim(conversation["id"], line)
        ended: str | None = None
        try:
            history = [{"role": m["role"], "content": m["content"]}
                       for m in await self.chats.messages(conversation["chat_id"])
                       if m["role"] in ("user", "assistant")]
            call_agent = CallAgent(self.pipeline, self.chats, conversation["chat_id"], agent,
                                   reach, await call_tool_policy(self.settings), context,
                                   bool(line["transfer_e164"]), history)
            reply = "".join([piece async for piece in call_agent.answer(text)])
            ended = _ENDED.get(call_agent.ending())
        finally:  # a failed turn frees the conversation too
            async with db.connection() as connection:
                await connection.execute(_RELEASE, conversation["id"], context.change_attempts,
                                         context.caller_verdict, ended)
        tools = [call["name"] for call in call_agent.tool_calls]
        await self.audit.record("telephony.line.talked", actor=identity.account_id,
                                subject=str(line["id"]),
                                data={"e164": line["e164"],
                                      "conversation_id": str(conversation["id"]),
                                      "tools": tools, "ended": ended})
        return {"conversation_id": str(conversation["id"]),
                "chat_id": str(conversation["chat_id"]), "reply": reply,
                "tool_calls": call_agent.tool_calls, "ended": ended,
                "transfer_to": line["transfer_e164"] if ended == "transferred" else None}

    async def _line(self, identity: Identity, line_id: str) -> dict[str, Any]:
        """The line if ``identity`` may talk to it and a call to it would be taken."""
        async with db.connection() as connection:
            row = await connection.fetchrow(_LINE, parse_id(line_id, "line"))
        if row is None:
            raise NotFound("No such line.")
        owner_or_admin(identity, row["owner_user_id"], "No such line.")
        reason = binding_refusal(True, row["enabled"], row["agent_callable"],
                                 row["owner_active"])
        if reason is not None:
            raise Conflict(f"A call to this line would be refused: "
                           f"{reason.value.replace('_', ' ')}.", code=reason.value)
        if not await self.features.feature_on("features.telephony", row["owner_user_id"]):
            raise Conflict("The telephone feature is off for the line's account.",
                           code="telephony_off")
        return dict(row)

    async def _conversation(self, identity: Identity, line: dict[str, Any], agent_id: UUID,
                            reach: Reach, conversation_id: str | None) -> dict[str, Any]:
        if conversation_id is None:
            chat = await self.chats.create(reach, agent_id, source="telephone",
                                           title=f"{TITLE_PREFIX}{line['e164']}")
            async with db.connection() as connection:
                return dict(await connection.fetchrow(_CREATE, line["id"], chat["id"],
                                                      identity.account_id))
        found = id_or_none(conversation_id)
        async with db.connection() as connection:
            row = None if found is None else await connection.fetchrow(
                _FIND, found, line["id"], identity.account_id)
        if row is None:
            raise NotFound("No such conversation.", field="conversation_id")
        if row["ended"] is not None:
            raise Conflict(f"This conversation has ended ({row['ended']}); start a new one.",
                           code="conversation_ended", field="conversation_id")
        return dict(row)

    async def _claim(self, conversation_id: UUID, line: dict[str, Any]) -> CallContext:
        """Hold the conversation for one turn; its context as the last turn left it."""
        async with db.connection() as connection:
            row = await connection.fetchrow(_CLAIM, conversation_id)
        if row is None:
            raise Conflict("The conversation is still answering its last turn.",
                           code="conversation_busy", field="conversation_id")
        return CallContext(None, line["id"], line["owner_user_id"], "",
                           change_attempts=row["change_attempts"],
                           caller_verdict=row["caller_verdict"])
