"""Noticing that the client went away while we are still working for it.

uvicorn drops writes to a closed connection silently, so a handler (or a streaming
body) that waits on an upstream would keep going for nobody. ``cancelled_on_disconnect``
cancels the work inside its block at once when the client disconnects (closing the
upstream request with it) and sets ``watch.disconnected`` so the caller can record why.

How it hears of the disconnect: ``svc serve``'s protocol (``DisconnectTellingProtocol``,
under the request deadlines of ``app.http.slow_clients``) calls the block back from
``connection_lost``, which costs a request nothing until then. Under any other server
a watcher task reads the ASGI receive channel once the request body has been read.
Every ``/v1`` passthrough request enters a block, and the task, its cancellation and
a cancel scope were about a tenth of such a request's CPU time (docs/performance.md).
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any, Callable

from blacksheep import Request
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: The attribute of a request cycle that holds the callbacks to run on a disconnect.
HOOKS = "disconnect_hooks"


class DisconnectTellingProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, calling back the blocks watching a request when
    its connection is lost before the response is complete."""

    def on_headers_complete(self) -> None:
        previous = self.cycle
        super().on_headers_complete()
        if self.cycle is not None and self.cycle is not previous:  # not an upgrade
            setattr(self.cycle, HOOKS, [])

    def connection_lost(self, exc: Exception | None) -> None:
        cycle = self.cycle
        super().connection_lost(exc)
        if cycle is not None and cycle.disconnected:
            for hook in list(getattr(cycle, HOOKS, ())):
                hook()


async def _read_until_gone(receive: Callable[[], Any], heard: Callable[[], None]) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            heard()
            return


class Watch:
    """The block of ``cancelled_on_disconnect``: cancels the task that entered it when
    the client goes away, and swallows that cancellation (and only that one) as the
    block ends, as a cancel scope does."""

    __slots__ = ("disconnected", "_receive", "_task", "_cancelling", "_cancelled", "_hooks",
                 "_hook", "_watcher")

    def __init__(self, receive: Callable[[], Any] | None) -> None:
        self.disconnected = False
        self._receive = receive
        self._task: asyncio.Task[Any] | None = None
        self._cancelling = 0
        self._cancelled = False  # whether this block cancelled its task
        self._hooks: list[Callable[[], None]] | None = None
        self._hook: Callable[[], None] | None = None  # ``_heard``, as put in the hooks
        self._watcher: asyncio.Task[None] | None = None

    def _heard(self) -> None:
        if not self.disconnected and self._task is not None:
            self.disconnected = True
            self._cancel_inside()

    def _cancel_inside(self) -> None:
        """Cancel the task, while it is still inside the block."""
        if self._task is not None and not self._cancelled:
            self._cancelled = True
            self._task.cancel()

    # Entered and left without awaiting (a cancel scope is too): a request passes
    # through one or two blocks, and no coroutine is made for either end of them.

    def __enter__(self) -> Watch:
        receive = self._receive
        if receive is None:
            return self  # no channel to hear a disconnect on (an in-process client)
        task = self._task = asyncio.current_task()
        assert task is not None, "cancelled_on_disconnect is entered in a task"
        self._cancelling = task.cancelling()
        cycle = getattr(receive, "__self__", None)
        hooks = self._hooks = getattr(cycle, HOOKS, None)
        if hooks is None:
            self._watcher = asyncio.get_running_loop().create_task(
                _read_until_gone(receive, self._heard))
        elif cycle.disconnected:
            # Gone already: the block's first wait is cancelled. Cancelled from the
            # loop, once the block waits, not now: a block that ends without
            # waiting would leave the cancellation to whatever its task awaits next.
            self.disconnected = True
            asyncio.get_running_loop().call_soon(self._cancel_inside)
        else:
            hook = self._hook = self._heard
            hooks.append(hook)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> bool:
        if self._hook is not None and self._hooks is not None:
            try:
                self._hooks.remove(self._hook)
            except ValueError:  # called already: ``connection_lost`` ran the hooks
                pass
        if self._watcher is not None:
            self._watcher.cancel()  # never awaited: it only ever waits on receive()
        self._task, task = None, self._task
        if not self._cancelled or task is None:
            return False
        # Ours, unless someone else cancelled the task too (then it propagates).
        return task.uncancel() <= self._cancelling and kind is not None and issubclass(
            kind, asyncio.CancelledError)


def cancelled_on_disconnect(request: Request) -> Watch:
    """``with cancelled_on_disconnect(request) as watch:`` — read the body before
    entering: a watcher task (under servers other than ours) takes over the receive
    channel. An error inside the block reaches the caller as itself."""
    return Watch(getattr(request.content, "receive", None))
