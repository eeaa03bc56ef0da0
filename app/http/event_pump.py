"""Feeding a streamed response from a run of events, with idle ticks and disconnects.

A streamed answer is written by the server's own task, which uvicorn never cancels
when the client goes away (writes to a closed connection are dropped silently). So the
events are produced in a task of their own, beside a watcher of the ASGI receive
channel: a disconnect cancels the producer at once, which closes the event source (and
with it any upstream request). The response body reads the events from a small
buffer; when none arrives for ``idle_seconds`` it gets an ``IDLE`` tick instead, so it
can send a keep-alive while slow work (retrieval, tools) runs.
"""

from __future__ import annotations

__all__ = ["IDLE", "Idle", "pumped"]

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing, suppress
from typing import Final, TypeVar

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from blacksheep import Request

from app.http.disconnect import cancelled_on_disconnect

Event = TypeVar("Event")


class Idle:
    """Type of ``IDLE``: nothing happened for ``idle_seconds``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "IDLE"


IDLE: Final = Idle()


async def _produce(events: AsyncIterator[Event], request: Request,
                   send: MemoryObjectSendStream[Event]) -> None:
    with cancelled_on_disconnect(request):
        async with send, aclosing(events) as source:
            async for event in source:
                await send.send(event)


async def pumped(events: AsyncIterator[Event], request: Request,
                 idle_seconds: float) -> AsyncIterator[Event | Idle]:
    """The events, with ``IDLE`` between them whenever they pause. Read the request
    body before calling: the watcher takes over the receive channel. The producer's
    failure, if any, is raised here after the events it did produce."""
    send, received = anyio.create_memory_object_stream[Event](16)
    producer = asyncio.ensure_future(_produce(events, request, send))
    try:
        async with received:
            while True:
                item: Event | Idle = IDLE
                with anyio.move_on_after(idle_seconds):
                    try:
                        item = await received.receive()
                    except anyio.EndOfStream:
                        break
                yield item
        await producer
    finally:
        producer.cancel()  # nothing if it ended; the body was closed early otherwise
        with suppress(asyncio.CancelledError, Exception):
            await producer
