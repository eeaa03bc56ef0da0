"""Chats (``/api/chats``): create, list, open, rename, delete, and send a message to the agent.

Owner-or-administrator: anyone else gets 404. Sending a message answers JSON by
default, or with ``stream: true`` server-sent events, one per pipeline event
(``event: delta|tool_started|tool_finished|citations|usage|error|finished``, each with
a JSON ``data`` line). A client that disconnects mid-stream stops the run at once, and
with it the upstream request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing, suppress
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from blacksheep import Request, Response, Router
from blacksheep.contents import StreamedContent

from app.bundle import Services
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import HttpRefusal, json_response
from app.http.guards import signed_in
from app.http.middleware import arrived_at
from app.services.access import reach_of
from app.services.chats import chat_view, message_view
from core.pipeline import Failed, Finished, PipelineEvent, ToolFinished, event_payload

Receive = Callable[[], Awaitable[dict[str, Any]]]


class NewChatBody(Body):
    agent_id: str
    title: str = ""


class RenameBody(Body):
    title: str


class MessageBody(Body):
    content: str
    stream: bool = False


@accepts(NewChatBody)
async def create_chat(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, NewChatBody, svc.max_body_bytes)
    row = await svc.chats.create(await reach_of(identity), body.agent_id, title=body.title)
    return json_response(201, chat_view(row))


async def list_chats(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    rows = await svc.chats.list(identity.account_id)
    return json_response(200, {"data": [chat_view(row) for row in rows]})


async def get_chat(request: Request, svc: Services, chat_id: str) -> Response:
    identity = await signed_in(request, svc)
    row = await svc.chats.find(await reach_of(identity), chat_id)
    messages = [message_view(m) for m in await svc.chats.messages(row["id"])]
    return json_response(200, {**chat_view(row), "messages": messages})


@accepts(RenameBody)
async def rename_chat(request: Request, svc: Services, chat_id: str) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, RenameBody, svc.max_body_bytes)
    return json_response(200, chat_view(
        await svc.chats.rename(await reach_of(identity), chat_id, body.title)))


async def delete_chat(request: Request, svc: Services, chat_id: str) -> None:
    identity = await signed_in(request, svc)
    await svc.chats.delete(await reach_of(identity), chat_id)


@accepts(MessageBody)
async def send_message(request: Request, svc: Services, chat_id: str) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, MessageBody, svc.max_body_bytes)
    events = await svc.chats.send(await reach_of(identity), chat_id, body.content, source="app",
                                  asked_at=arrived_at(request))
    if body.stream:
        receive = getattr(request.content, "receive", None)

        async def frames() -> AsyncIterator[bytes]:  # BlackSheep wants a generator function
            async for frame in _sse(events, receive):
                yield frame

        return Response(200, [(b"Cache-Control", b"no-cache"), (b"X-Accel-Buffering", b"no")],
                        StreamedContent(b"text/event-stream", frames))
    return await _json_answer(chat_id, events)


async def _json_answer(chat_id: str, events: AsyncIterator[PipelineEvent]) -> Response:
    tools: list[dict[str, Any]] = []
    failure: Failed | None = None
    finished: Finished | None = None
    async with aclosing(events) as stream:
        async for event in stream:
            if isinstance(event, ToolFinished):
                tools.append(event_payload(event)[1])
            elif isinstance(event, Failed):
                failure = event
            elif isinstance(event, Finished):
                finished = event
    if failure is not None or finished is None:
        failure = failure or Failed("internal_error", "The answer did not finish.", 500)
        raise HttpRefusal(failure.message, code=failure.code, status=failure.status_code)
    answer = event_payload(finished)[1]
    return json_response(200, {"chat_id": chat_id, "message": {
        "role": "assistant", "content": finished.text, "citations": answer["citations"]},
        "tools": tools, "finish_reason": finished.finish_reason,
        "usage": {"prompt_tokens": finished.prompt_tokens,
                  "completion_tokens": finished.completion_tokens}})


def _frame(event: PipelineEvent) -> bytes:
    name, payload = event_payload(event)
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return f"event: {name}\ndata: {data}\n\n".encode()


async def _pump(events: AsyncIterator[PipelineEvent], send: MemoryObjectSendStream[bytes],
                receive: Receive | None) -> None:
    """Run ``events`` into ``send`` as frames, until they end or the client leaves."""
    async with send, anyio.create_task_group() as tasks:
        if receive is not None:
            async def watch() -> None:
                # The body has been read, so the next ASGI message is the disconnect.
                while (await receive())["type"] != "http.disconnect":
                    pass
                tasks.cancel_scope.cancel()

            tasks.start_soon(watch)
        async with aclosing(events) as stream:
            async for event in stream:
                await send.send(_frame(event))
        tasks.cancel_scope.cancel()


async def _sse(events: AsyncIterator[PipelineEvent], receive: Receive | None) -> AsyncIterator[bytes]:
    """The frames, produced in a task of their own: uvicorn drops writes to a client
    that left without telling the writer, so only the watcher can notice and cancel."""
    send, frames = anyio.create_memory_object_stream[bytes](16)
    pump = asyncio.ensure_future(_pump(events, send, receive))
    try:
        async with frames:
            async for frame in frames:
                yield frame
        await pump  # its failure, if any, is this response's
    finally:
        if not pump.done():
            pump.cancel()
            with suppress(asyncio.CancelledError):
                await pump


def register(router: Router) -> None:
    router.add_post("/api/chats", create_chat)
    router.add_get("/api/chats", list_chats)
    router.add_get("/api/chats/{chat_id}", get_chat)
    router.add_patch("/api/chats/{chat_id}", rename_chat)
    router.add_delete("/api/chats/{chat_id}", delete_chat)
    router.add_post("/api/chats/{chat_id}/messages", send_message)
