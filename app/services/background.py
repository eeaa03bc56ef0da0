"""A service's long-running task on the process's event loop: the outbox worker's
loop, the call leases' heartbeat, the AudioSocket listener. Started at most once,
stopped by cancelling it and waiting until it has ended, so a stopped service holds
no task that could still write after it."""

from __future__ import annotations

__all__ = ["BackgroundTask"]

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any


class BackgroundTask:
    """At most one running task, named ``name`` for the loop's debugging output."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self._task: asyncio.Task[Any] | None = None

    @property
    def running(self) -> bool:
        """Started and not stopped since (a task that ended by itself still counts
        until ``stop``)."""
        return self._task is not None

    def start(self, run: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        """Run ``run()`` in the background, unless a task runs already (then ``run``
        is not called, so no coroutine is left unawaited)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(run(), name=self.name)

    async def stop(self) -> None:
        """Cancel the task and wait until it has ended; nothing to do when none runs.
        Its cancellation is the expected end, not an error."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
