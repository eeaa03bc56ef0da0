"""A service's background task: started at most once, and stopped by cancelling it
and waiting until it has ended."""

from __future__ import annotations

import asyncio

import pytest

from app.services.background import BackgroundTask

pytestmark = pytest.mark.anyio


class Loop:
    """A service loop that records what happened to it."""

    def __init__(self) -> None:
        self.calls = 0
        self.started = asyncio.Event()
        self.cleaned_up = False

    async def run(self) -> None:
        self.calls += 1
        self.started.set()
        try:
            await asyncio.Event().wait()
        finally:
            self.cleaned_up = True


async def test_a_second_start_while_running_runs_nothing_more():
    loop, task = Loop(), BackgroundTask("loop")
    task.start(loop.run)
    task.start(loop.run)
    await loop.started.wait()
    assert task.running and loop.calls == 1
    assert [t.get_name() for t in asyncio.all_tasks()].count("loop") == 1
    await task.stop()


async def test_stop_cancels_and_returns_only_once_the_task_has_ended():
    loop, task = Loop(), BackgroundTask()
    task.start(loop.run)
    await loop.started.wait()
    await task.stop()
    assert loop.cleaned_up and not task.running


async def test_stop_without_a_start_does_nothing_and_a_stopped_task_starts_again():
    loop, task = Loop(), BackgroundTask()
    await task.stop()
    assert not task.running
    task.start(loop.run)
    await loop.started.wait()
    await task.stop()
    loop.started.clear()
    task.start(loop.run)
    await loop.started.wait()
    assert loop.calls == 2 and task.running
    await task.stop()


async def test_a_failure_of_the_task_itself_is_not_swallowed():
    async def fails() -> None:
        raise RuntimeError("broken loop")

    task = BackgroundTask()
    task.start(fails)
    await asyncio.sleep(0)  # let it run to its failure before the stop
    with pytest.raises(RuntimeError, match="broken loop"):
        await task.stop()
