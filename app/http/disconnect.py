"""Noticing that the client went away while we are still working for it.

uvicorn drops writes to a closed connection silently, so a handler (or a streaming
body) that waits on an upstream would keep going for nobody. ``cancelled_on_disconnect``
watches the ASGI receive channel once the request body has been read: when the client
disconnects, the work inside the block is cancelled at once (closing the upstream
request with it) and ``watch.disconnected`` is set so the caller can record why.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import AsyncIterator

import anyio
from blacksheep import Request


@dataclass
class Watch:
    disconnected: bool = False
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


async def _wait(receive, watch: Watch) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            watch.disconnected = True
            watch.scope.cancel()
            return


@contextlib.asynccontextmanager
async def cancelled_on_disconnect(request: Request) -> AsyncIterator[Watch]:
    """Read the body before entering: the watcher takes over the receive channel.

    The watcher is a plain task rather than a task group, so an error inside the block
    reaches the caller as itself, not wrapped in an exception group.
    """
    watch = Watch()
    receive = getattr(request.content, "receive", None)
    watcher = asyncio.create_task(_wait(receive, watch)) if receive is not None else None
    try:
        with watch.scope:
            yield watch
    finally:
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
