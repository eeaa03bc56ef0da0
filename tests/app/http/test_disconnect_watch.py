"""``cancelled_on_disconnect``: the block is cancelled when the client goes away, heard
from the connection's loss (``svc serve``'s protocol) or, under another server, from the
ASGI receive channel; the cancellation is the block's own and ends with it."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from app.http.disconnect import HOOKS, cancelled_on_disconnect

pytestmark = pytest.mark.anyio


class Cycle:
    """What the block sees of uvicorn's request cycle under ``svc serve``."""

    def __init__(self) -> None:
        self.disconnected = False
        setattr(self, HOOKS, [])

    async def receive(self) -> dict:
        raise AssertionError("with hooks, the channel is never read")

    def lose_connection(self) -> None:  # what DisconnectTellingProtocol does
        self.disconnected = True
        for hook in list(getattr(self, HOOKS)):
            hook()


def _request(receive) -> SimpleNamespace:
    return SimpleNamespace(content=SimpleNamespace(receive=receive))


async def test_a_lost_connection_cancels_the_block_and_is_swallowed():
    cycle = Cycle()
    asyncio.get_running_loop().call_later(0.05, cycle.lose_connection)
    with cancelled_on_disconnect(_request(cycle.receive)) as watch:
        await asyncio.sleep(30)
    assert watch.disconnected and getattr(cycle, HOOKS) == []
    await asyncio.sleep(0)  # no cancellation left over for the task


async def test_a_connection_lost_before_the_block_cancels_its_first_wait():
    cycle = Cycle()
    cycle.lose_connection()
    with cancelled_on_disconnect(_request(cycle.receive)) as watch:
        await asyncio.sleep(30)
    assert watch.disconnected


async def test_a_block_that_never_waits_leaves_no_cancellation_behind():
    cycle = Cycle()
    cycle.lose_connection()
    with cancelled_on_disconnect(_request(cycle.receive)) as watch:
        pass  # done before anything was awaited
    assert watch.disconnected
    await asyncio.sleep(0)  # the task goes on: nothing left over to cancel it
    await asyncio.sleep(0)


async def test_under_another_server_the_receive_channel_is_watched():
    gone = asyncio.Event()

    async def receive() -> dict:
        await gone.wait()
        return {"type": "http.disconnect"}

    asyncio.get_running_loop().call_later(0.05, gone.set)
    with cancelled_on_disconnect(_request(receive)) as watch:
        await asyncio.sleep(30)
    assert watch.disconnected


async def test_a_client_that_stays_changes_nothing_and_errors_pass_as_themselves():
    cycle = Cycle()
    with cancelled_on_disconnect(_request(cycle.receive)) as watch:
        await asyncio.sleep(0)
    assert not watch.disconnected and getattr(cycle, HOOKS) == []
    with pytest.raises(KeyError):
        with cancelled_on_disconnect(_request(cycle.receive)):
            raise KeyError("x")


async def test_a_cancellation_from_elsewhere_is_not_swallowed():
    cycle = Cycle()

    async def block() -> None:
        with cancelled_on_disconnect(_request(cycle.receive)):
            await asyncio.sleep(30)

    task = asyncio.ensure_future(block())
    await asyncio.sleep(0.01)
    task.cancel()
    cycle.lose_connection()
    with pytest.raises(asyncio.CancelledError):
        await task
