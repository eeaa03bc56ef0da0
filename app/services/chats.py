"""Chats: conversations with an agent, kept on the service, and sending a message.

What belongs here: creating a chat with an agent the caller reaches, listing a
caller's chats (API-created ones left out: spec public-api.md "Limits" — kept,
excluded from the list, openable by direct URL; a telephone call's conversation too,
which belongs to the call log), opening one with its messages, renaming and
deleting it, and ``send``: store the question, run the agent pipeline with the
kept conversation, store the answer with its citations.

Who may touch a chat: its owner or an administrator; anyone else gets 404, as if it
did not exist. The public API continues only the caller's own chats
(``owner_only=True``). The functions ``/v1`` needs: ``create_api_chat``,
``history``, ``append`` and ``send``.
"""

from __future__ import annotations

__all__ = ["Chats", "chat_view", "message_view"]

import datetime as dt
import json
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any
from uuid import UUID

from app.errors import Conflict, NotFound, Unprocessable
from app.services.access import parse_id
from app.services.pipeline import AgentProfile, Pipeline, TurnRequest, load_agent
from app.tables import Chat, ChatMessage
from core.access import Reach
from core.generation import GenerationOptions
from core.pipeline import AppToolPolicy, Citation, Finished, PipelineEvent, ToolPolicy

MAX_CONTENT_CHARS = 32_000
MAX_TITLE_CHARS = 200
_TITLE_FROM_QUESTION = 60
_UNLISTED_SOURCES = ("api", "telephone")  # an untitled chat is named after its first question


def chat_view(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": str(row["id"]), "agent_id": str(row["agent_id"]) if row["agent_id"] else None,
            "title": row["title"], "source": row["source"],
            "created_at": row["created_at"].isoformat(),
            "updated_at": row["updated_at"].isoformat()}


def message_view(row: dict[str, Any]) -> dict[str, Any]:
    citations = row["citations"]
    return {"id": row["id"], "role": row["role"], "content": row["content"],
            "citations": json.loads(citations) if isinstance(citations, str) else citations,
            "created_at": row["created_at"].isoformat()}


class Chats:
    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    # -- the chat itself -----------------------------------------------------------------

    async def create(self, reach: Reach, agent_id: str | UUID, *, title: str = "",
                     source: str = "app", api_key_id: UUID | None = None) -> dict[str, Any]:
        """A new chat of ``reach``'s account with an agent it reaches (404 otherwise)."""
        if len(title) > MAX_TITLE_CHARS:
            raise Unprocessable(f"title: at most {MAX_TITLE_CHARS} characters.", field="title")
        agent = await load_agent(agent_id, reach)
        row = Chat(owner_id=reach.account_id, agent_id=agent.id, source=source,
                   title=title.strip(), api_key_id=api_key_id)
        await row.save()
        return await self._row(row.id)

    async def create_api_chat(self, reach: Reach, agent_id: str | UUID,
                              api_key_id: UUID | None) -> dict[str, Any]:
        """A conversation started through ``/v1``: kept, but not in the chat list."""
        return await self.create(reach, agent_id, source="api", api_key_id=api_key_id)

    async def _row(self, chat_id: UUID) -> dict[str, Any]:
        row = await Chat.select().where(Chat.id == chat_id).first()
        if row is None:
            raise NotFound("No such chat.")
        return row

    async def find(self, reach: Reach, chat_id: str | UUID, *,
                   owner_only: bool = False) -> dict[str, Any]:
        """The chat if ``reach`` owns it (or, unless ``owner_only``, administers); 404."""
        row = await Chat.select().where(Chat.id == parse_id(chat_id, "chat")).first()
        if row is None or not (row["owner_id"] == reach.account_id
                               or (reach.is_admin and not owner_only)):
            raise NotFound("No such chat.")
        return row

    async def list(self, account_id: UUID) -> list[dict[str, Any]]:
        """The account's own chats, newest activity first; API and telephone chats
        left out (they open by id, from the API's header or the call's page)."""
        return await Chat.select().where(
            (Chat.owner_id == account_id) & Chat.source.not_in(_UNLISTED_SOURCES)).order_by(
            Chat.updated_at, ascending=False)

    async def rename(self, reach: Reach, chat_id: str | UUID, title: str) -> dict[str, Any]:
        """Give the chat a new title (1 to 200 characters once trimmed); 404, 422."""
        cleaned = " ".join(title.split())
        if not cleaned or len(cleaned) > MAX_TITLE_CHARS:
            raise Unprocessable(f"title: 1 to {MAX_TITLE_CHARS} characters.", field="title")
        row = await self.find(reach, chat_id)
        await Chat.update({Chat.title: cleaned}).where(Chat.id == row["id"])
        return await self._row(row["id"])

    async def delete(self, reach: Reach, chat_id: str | UUID) -> None:
        row = await self.find(reach, chat_id)
        await Chat.delete().where(Chat.id == row["id"])

    # -- messages --------------------------------------------------------------------------

    async def messages(self, chat_id: UUID) -> list[dict[str, Any]]:
        return await ChatMessage.select().where(ChatMessage.chat_id == chat_id).order_by(
            ChatMessage.id)

    async def history(self, reach: Reach, chat_id: str | UUID) -> list[dict[str, str]]:
        """The conversation of a chat the caller owns, as role/content pairs; 404."""
        row = await self.find(reach, chat_id, owner_only=True)
        return [{"role": m["role"], "content": m["content"]} for m in await self.messages(row["id"])]

    async def append(self, chat_id: UUID, role: str, content: str,
                     citations: tuple[Citation, ...] = ()) -> dict[str, Any]:
        """Store one message and mark the chat as active now."""
        row = ChatMessage(chat_id=chat_id, role=role, content=content,
                          citations=json.dumps([c.as_json() for c in citations]))
        await row.save()
        await Chat.update({Chat.updated_at: dt.datetime.now(dt.UTC)}).where(Chat.id == chat_id)
        stored = await ChatMessage.select().where(ChatMessage.id == row.id).first()
        return message_view(stored)

    # -- sending --------------------------------------------------------------------------

    async def send(self, reach: Reach, chat_id: str | UUID, content: str, *,
                   source: str = "app", api_key_id: UUID | None = None,
                   policy: ToolPolicy | None = None, owner_only: bool = False,
                   generation: GenerationOptions | None = None,
                   asked_at: float | None = None) -> AsyncIterator[PipelineEvent]:
        """Store the question and return the pipeline's events for the answer.
        ``asked_at``: when the request arrived (``time.monotonic``), for usage latency.

        Everything that can refuse (404, 409, 422) does so here, before the first event,
        so a route can still answer with a status. The answer is stored when the run
        finishes; a run that fails or is abandoned leaves only the question.
        """
        if not content.strip() or len(content) > MAX_CONTENT_CHARS:
            raise Unprocessable(f"content: 1 to {MAX_CONTENT_CHARS} characters.", field="content")
        chat = await self.find(reach, chat_id, owner_only=owner_only)
        agent = await self._agent_of(chat, reach)
        history = [{"role": m["role"], "content": m["content"]}
                   for m in await self.messages(chat["id"])]
        await self.append(chat["id"], "user", content)
        if not chat["title"] and not history:
            title = " ".join(content.split())[:_TITLE_FROM_QUESTION]
            await Chat.update({Chat.title: title}).where(Chat.id == chat["id"])
        request = TurnRequest(agent, content, reach, history, source, api_key_id,
                              policy or AppToolPolicy(),
                              generation=generation or GenerationOptions(),
                              asked_at=asked_at if asked_at is not None else time.monotonic())
        return self._answer(chat["id"], request)

    async def _agent_of(self, chat: dict[str, Any], reach: Reach) -> AgentProfile:
        if chat["agent_id"] is not None:
            try:
                return await load_agent(chat["agent_id"], reach)
            except NotFound:
                pass
        raise Conflict("This chat's agent is no longer available.", code="agent_unavailable")

    async def _answer(self, chat_id: UUID, request: TurnRequest) -> AsyncIterator[PipelineEvent]:
        async with aclosing(self.pipeline.run(request)) as events:
            async for event in events:
                if isinstance(event, Finished) and event.finish_reason != "error":
                    await self.append(chat_id, "assistant", event.text, event.citations)
                yield event
