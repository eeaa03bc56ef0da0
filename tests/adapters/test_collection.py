"""Garbage collection on the ticker's beat: automatic collection is off while calls
play, the collections that are due run after a ring, the old generation is kept empty
by freezing what survives, and what became garbage while frozen is swept once nothing
plays, or while playing once enough calls have ended."""

from __future__ import annotations

import gc
import logging
import weakref
from collections.abc import Callable

import anyio
import pytest

from adapters.voice import collection
from adapters.voice.collection import (FORCED_SWEEP_CALLS, FROZEN_GROWTH, CollectionSchedule,
                                       due_generation, sweep_due)
from adapters.voice.pacing import FrameTicker

pytestmark = pytest.mark.anyio


class Member:
    """A call with ``frames`` frames to play, one per ring."""

    def __init__(self, frames: int, on_tick: Callable[[], None] = lambda: None) -> None:
        self.frames = frames
        self._on_tick = on_tick

    def on_tick(self) -> bool:
        if self.frames:
            self.frames -= 1
            self._on_tick()
        return self.frames > 0

    def tick_failed(self, exc: Exception) -> None:
        raise AssertionError("a test member does not fail") from exc


class Cycle:
    """An object that refers to itself, so only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def churn() -> None:
    """Garbage only the cyclic collector frees: past the young threshold of the tests."""
    for _ in range(60):
        Cycle()


@pytest.fixture
def collector():
    """The collector's state as the test found it, restored after."""
    enabled, thresholds = gc.isenabled(), gc.get_threshold()
    gc.collect()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)
    if enabled:
        gc.enable()
    else:
        gc.disable()


async def until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(5):
        while not condition():
            await anyio.sleep(0.005)


def playing(schedule: CollectionSchedule, *members: Member) -> FrameTicker:
    ticker = FrameTicker(collection=schedule)
    for member in members:
        ticker.join(member)
    ticker.wake()
    return ticker


# -- the rules, alone


@pytest.mark.parametrize(("counts", "due"), [
    ((0, 0, 0), None), ((699, 9, 9), None), ((700, 0, 0), 0), ((700, 9, 30), 0),
    ((700, 10, 0), 1), ((700, 10, 9), 1), ((700, 10, 10), 2), ((5, 10, 10), None),
])
def test_the_generation_due_is_the_oldest_whose_count_passed_its_threshold(counts, due):
    assert due_generation(counts, (700, 10, 10)) == due


def test_nothing_is_due_when_automatic_collection_was_turned_off_by_a_zero_threshold():
    assert due_generation((10_000, 100, 100), (0, 10, 10)) is None


def test_a_sweep_is_due_when_nothing_plays_and_a_call_has_ended_since_the_last():
    rule = dict(players=0, frozen=None, frozen_after_sweep=1000)
    assert sweep_due(playing=False, ended_since_sweep=1, **rule)
    assert not sweep_due(playing=False, ended_since_sweep=0, **rule)


def test_while_playing_a_sweep_waits_for_more_ended_calls_than_are_playing():
    rule = dict(playing=True, frozen=None, frozen_after_sweep=1000)
    assert not sweep_due(ended_since_sweep=FORCED_SWEEP_CALLS - 1, players=1, **rule)
    assert sweep_due(ended_since_sweep=FORCED_SWEEP_CALLS, players=1, **rule)
    assert not sweep_due(ended_since_sweep=499, players=500, **rule)
    assert sweep_due(ended_since_sweep=500, players=500, **rule)


@pytest.mark.parametrize("is_playing", [True, False])
def test_a_sweep_is_due_once_the_frozen_objects_grew_too_many_times_over(is_playing):
    rule = dict(playing=is_playing, ended_since_sweep=0, players=500, frozen_after_sweep=1000)
    assert not sweep_due(frozen=FROZEN_GROWTH * 1000, **rule)
    assert sweep_due(frozen=FROZEN_GROWTH * 1000 + 1, **rule)
    assert not sweep_due(frozen=None, **rule)  # not counted: not known to have grown


# -- on the real collector


@pytest.mark.parametrize("enabled_before", [True, False])
async def test_automatic_collection_is_off_while_a_ticker_plays_and_as_before_after(
        collector, enabled_before):
    (gc.enable if enabled_before else gc.disable)()
    schedule = CollectionSchedule()
    ticker = playing(schedule, Member(5))
    assert schedule.playing and not gc.isenabled()
    await until(lambda: not schedule.playing)
    assert gc.isenabled() is enabled_before
    assert ticker.rings == 5


async def test_the_collection_that_is_due_runs_after_the_rings_frames(collector):
    gc.set_threshold(50, 3, 10)
    schedule = CollectionSchedule()
    seen_at_tick: list[tuple[int, int, int]] = []
    kept = []

    def allocate() -> None:
        seen_at_tick.append(gc.get_count())
        kept.extend([] for _ in range(60))  # past the youngest threshold every tick

    playing(schedule, Member(8, allocate))
    await until(lambda: not schedule.playing)
    # Every ring found the young generation emptied by the previous ring's collection.
    assert all(count[0] < 50 for count in seen_at_tick[1:])
    young, middle, old = schedule.stats.collections
    assert young + middle >= 7 and middle >= 2 and old == 0


async def test_what_survives_a_middle_collection_while_playing_is_frozen(collector):
    gc.set_threshold(50, 1, 10)
    schedule = CollectionSchedule()
    frozen_before = gc.get_freeze_count()
    survivors = []
    old_at_tick: list[tuple[int, int]] = []  # (middle collections so far, old objects)

    def tick() -> None:
        old_at_tick.append((schedule.stats.collections[1], len(gc.get_objects(generation=2))))
        survivors.extend([] for _ in range(60))

    playing(schedule, Member(6, tick))
    await until(lambda: not schedule.playing)
    assert schedule.stats.collections[1] >= 2
    assert gc.get_freeze_count() >= frozen_before + len(survivors)
    # Once a middle collection ran, the old generation stays empty.
    after_one = [old for middle, old in old_at_tick if middle >= 1]
    assert after_one and set(after_one) == {0}


async def test_garbage_frozen_while_a_call_played_is_swept_once_nothing_plays(collector):
    gc.set_threshold(50, 1, 10)
    schedule = CollectionSchedule()
    cycle = Cycle()
    gone = weakref.ref(cycle)
    member = Member(1_000_000, churn)
    ticker = playing(schedule, member)
    await until(lambda: schedule.stats.collections[1] >= 1)
    del cycle
    gc.collect()
    assert gone() is not None  # frozen: no collection reaches it
    ticker.leave(member)  # the call ends; nothing plays any more
    assert schedule.stats.sweeps == 1
    assert gone() is None
    assert not schedule.playing and gc.isenabled()


async def test_a_sweep_while_playing_waits_for_enough_ended_calls_and_is_logged(
        collector, caplog, monkeypatch):
    monkeypatch.setattr(collection, "FORCED_SWEEP_CALLS", 3)
    gc.set_threshold(50, 1, 10)
    schedule = CollectionSchedule()
    still_playing = Member(1_000_000, churn)
    ended = [Member(1_000_000) for _ in range(3)]
    ticker = playing(schedule, still_playing, *ended)
    cycle = Cycle()
    gone = weakref.ref(cycle)
    await until(lambda: schedule.stats.collections[1] >= 1)
    del cycle
    for member in ended[:2]:
        ticker.leave(member)
    middle = schedule.stats.collections[1]
    await until(lambda: schedule.stats.collections[1] >= middle + 2)
    assert schedule.stats.sweeps == 0 and gone() is not None  # two ended: not yet
    with caplog.at_level(logging.WARNING, logger="svc.voice.collection"):
        ticker.leave(ended[2])
        await until(lambda: schedule.stats.forced_sweeps == 1)
    assert gone() is None
    assert schedule.playing  # the call still playing plays on
    assert "(1 playing, 3 ended since the last)" in caplog.text
    ticker.leave(still_playing)
    assert gc.isenabled()


async def test_a_ticker_driven_by_a_task_holds_and_releases_collection_the_same_way(
        collector):
    schedule = CollectionSchedule()
    ticker = FrameTicker(driven=True, collection=schedule)
    ticker.join(Member(4))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(ticker.drive)
        ticker.wake()
        assert schedule.playing and not gc.isenabled()
        await until(lambda: not schedule.playing)
        tasks.cancel_scope.cancel()
    assert gc.isenabled()
    assert ticker.rings == 4
