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
from adapters.voice.collection import (GROWTH_AT_LEAST, IDLE_SWEEP_GAP_SECONDS, MIDDLE_EVERY,
                                       OLD_EVERY, POSTPONED_AT_MOST, CollectionSchedule,
                                       NoSchedule, generation_due, resident_bytes, sweep_due)
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
def schedules():
    """``schedules()`` makes a schedule for the test; each is closed after it, which
    gives collection back to CPython as the test found it."""
    made: list[CollectionSchedule] = []

    def make() -> CollectionSchedule:
        made.append(CollectionSchedule())
        return made[-1]

    gc.collect()
    yield make
    for schedule in made:
        schedule.close()


async def until(condition: Callable[[], bool]) -> None:
    # A guard, not a measure: a few ticks normally, but an old collection (and a
    # test's count of the old generation) in a large test process on a busy machine
    # can take seconds.
    with anyio.fail_after(60):
        while not condition():
            await anyio.sleep(0.005)


def playing(schedule: CollectionSchedule, *members: Member) -> FrameTicker:
    ticker = FrameTicker(collection=schedule)
    for member in members:
        ticker.join(member)
    ticker.wake()
    return ticker


# -- the rules, alone


def test_young_is_collected_at_every_ring_middle_and_old_at_their_own_beat():
    due = [generation_due(ring) for ring in range(1, 2 * OLD_EVERY + 1)]
    assert due.count(2) == 2 and due[OLD_EVERY - 1] == 2 and due[-1] == 2
    assert due.count(1) == 2 * (OLD_EVERY // MIDDLE_EVERY - 1)
    assert due[MIDDLE_EVERY - 1] == 1
    assert due.count(0) == len(due) - 2 * (OLD_EVERY // MIDDLE_EVERY)


def rule(**given) -> bool:
    return sweep_due(**{"playing": True, "ended_since_sweep": 0,
                        "seconds_since_sweep": IDLE_SWEEP_GAP_SECONDS, "resident": 2**30,
                        "resident_after_sweep": 2**30, **given})


def test_a_sweep_is_due_when_nothing_plays_and_a_call_has_ended_since_the_last():
    assert rule(playing=False, ended_since_sweep=1)
    assert not rule(playing=False, ended_since_sweep=0)


def test_while_nothing_plays_sweeps_are_a_minute_apart_at_least():
    assert not rule(playing=False, ended_since_sweep=500,
                    seconds_since_sweep=IDLE_SWEEP_GAP_SECONDS - 1)


def test_while_playing_ended_calls_never_make_a_sweep_due():
    assert not rule(ended_since_sweep=1_000_000)


@pytest.mark.parametrize("is_playing", [True, False])
@pytest.mark.parametrize("after_sweep", [GROWTH_AT_LEAST, 3 * GROWTH_AT_LEAST])
def test_a_sweep_is_due_once_the_resident_memory_more_than_doubled(is_playing, after_sweep):
    given = dict(playing=is_playing, resident_after_sweep=after_sweep)
    assert not rule(resident=2 * after_sweep, **given)
    assert rule(resident=2 * after_sweep + 1, **given)


def test_a_small_process_is_swept_for_its_memory_only_past_a_floor():
    small = 50 * 2**20
    assert not rule(resident_after_sweep=small, resident=small + GROWTH_AT_LEAST)
    assert rule(resident_after_sweep=small, resident=small + GROWTH_AT_LEAST + 1)


def test_without_a_reading_of_memory_the_rule_on_memory_is_not_applied():
    assert not rule(resident=None, resident_after_sweep=GROWTH_AT_LEAST)
    assert not rule(resident=10 * GROWTH_AT_LEAST, resident_after_sweep=None)


def test_the_resident_memory_is_read_on_linux():
    resident = resident_bytes()
    assert resident is None or 10 * 2**20 < resident < 64 * 2**30


# -- on the real collector


@pytest.mark.parametrize("enabled_before", [True, False])
async def test_automatic_collection_is_off_while_a_ticker_plays_and_as_before_after(
        schedules, enabled_before):
    (gc.enable if enabled_before else gc.disable)()
    try:
        schedule = schedules()
        ticker = playing(schedule, Member(5))
        assert schedule.playing and not gc.isenabled()
        await until(lambda: not schedule.playing)
        assert gc.isenabled() is enabled_before
        assert ticker.rings == 5
    finally:
        gc.enable()  # as every test finds it


@pytest.fixture
def quick_beat(monkeypatch):
    """The middle generation collected every 2nd ring, the old one every 4th, each
    whatever is left of the slot."""
    monkeypatch.setattr(collection, "MIDDLE_EVERY", 2)
    monkeypatch.setattr(collection, "OLD_EVERY", 4)
    monkeypatch.setattr(collection, "SLACK_KEPT", float("-inf"))


async def test_what_a_slot_allocated_is_collected_after_its_ring(schedules, quick_beat):
    schedule = schedules()
    garbage: list[weakref.ref] = []
    gone_by_next_tick: list[bool] = []

    def tick() -> None:
        gone_by_next_tick.extend(ref() is None for ref in garbage)
        garbage.clear()
        garbage.append(weakref.ref(Cycle()))

    playing(schedule, Member(9, tick))
    await until(lambda: not schedule.playing)
    assert gone_by_next_tick == [True] * 8  # each tick's cycle, by the next tick
    assert schedule.stats.collections == [5, 2, 2]  # rings 1-9: old at 4 and 8


async def test_the_old_generation_is_frozen_after_each_old_collection(
        schedules, quick_beat):
    schedule = schedules()
    frozen_before = gc.get_freeze_count()
    survivors = []
    old_at_tick: list[tuple[int, int]] = []  # (old collections so far, old objects)

    def tick() -> None:
        old_at_tick.append((schedule.stats.collections[2], len(gc.get_objects(generation=2))))
        survivors.extend([] for _ in range(60))

    playing(schedule, Member(10, tick))
    await until(lambda: not schedule.playing)
    assert schedule.stats.collections[2] == 2
    assert gc.get_freeze_count() >= frozen_before + len(survivors) - 60 * 2  # ticks 9-10
    # Right after an old collection the old generation is empty.
    assert [old for collections, old in old_at_tick if collections == 1][0] == 0


async def garbage_frozen_while_playing(
        schedule: CollectionSchedule) -> tuple[weakref.ref, Member, FrameTicker]:
    """A call playing, and a cycle frozen by an old collection, then dropped: the
    cycle's weak reference, the call, its ticker."""
    cycle = Cycle()
    gone = weakref.ref(cycle)
    member = Member(1_000_000, churn)
    ticker = playing(schedule, member)
    await until(lambda: schedule.stats.collections[2] >= 1)
    del cycle
    return gone, member, ticker


async def test_garbage_frozen_while_a_call_played_is_swept_once_nothing_plays(
        schedules, quick_beat):
    schedule = schedules()
    gone, member, ticker = await garbage_frozen_while_playing(schedule)
    gc.collect()
    assert gone() is not None  # frozen: no collection reaches it
    ticker.leave(member)  # the call ends; nothing plays any more
    assert schedule.stats.sweeps == 1
    assert gone() is None
    assert not schedule.playing and gc.isenabled()


def test_a_collection_that_would_not_fit_in_the_rest_of_the_slot_waits_a_few_rings(
        schedules):
    schedule = schedules()
    ticker = object()
    schedule.hold(ticker)
    try:
        schedule.after_ring(time_left=1.0)  # room: collected
        assert schedule.stats.collections[0] == 1
        for _ in range(POSTPONED_AT_MOST):
            schedule.after_ring(time_left=0.0)  # the next ring is due now: it waits
        assert schedule.stats.collections[0] == 1
        assert schedule.stats.postponed == POSTPONED_AT_MOST
        schedule.after_ring(time_left=0.0)  # it has waited long enough
        assert schedule.stats.collections[0] == 2
        schedule.after_ring(time_left=1.0)
        assert schedule.stats.collections[0] == 3
        assert schedule.stats.postponed == POSTPONED_AT_MOST
    finally:
        schedule.release(ticker)
    assert gc.isenabled()


async def test_while_playing_ended_calls_wait_for_the_next_sweep(
        schedules, quick_beat):
    schedule = schedules()
    still_playing, ended = Member(1_000_000, churn), Member(1_000_000)
    ticker = playing(schedule, still_playing, ended)
    cycle = Cycle()
    gone = weakref.ref(cycle)
    await until(lambda: schedule.stats.collections[2] >= 1)
    del cycle
    ticker.leave(ended)
    old = schedule.stats.collections[2]
    await until(lambda: schedule.stats.collections[2] >= old + 2)
    assert schedule.stats.sweeps == 0 and gone() is not None  # frozen, and waits
    ticker.leave(still_playing)  # nothing plays: swept at once
    assert schedule.stats.sweeps == 1 and gone() is None


async def test_a_ticker_driven_by_a_task_holds_and_releases_collection_the_same_way(
        schedules):
    schedule = schedules()
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


async def test_a_process_whose_memory_doubled_is_swept_while_playing_and_it_is_logged(
        schedules, quick_beat, monkeypatch, caplog):
    resident = [GROWTH_AT_LEAST]
    monkeypatch.setattr(collection, "resident_bytes", lambda: resident[0])
    schedule = schedules()
    gone, member, ticker = await garbage_frozen_while_playing(schedule)
    old = schedule.stats.collections[2]
    await until(lambda: schedule.stats.collections[2] >= old + 1)
    assert schedule.stats.forced_sweeps == 0 and gone() is not None
    resident[0] = 2 * GROWTH_AT_LEAST + 1
    with caplog.at_level(logging.WARNING, logger="svc.voice.collection"):
        await until(lambda: schedule.stats.forced_sweeps == 1)
    assert gone() is None
    assert "while calls played (1), the memory having doubled since the last (from 256 MB)" \
        in caplog.text
    assert schedule.playing
    ticker.leave(member)


async def test_calls_that_end_after_their_last_ring_are_swept_once_as_they_leave(
        schedules):
    schedule = schedules()
    calls = [Member(2) for _ in range(3)]
    ticker = playing(schedule, *calls)
    await until(lambda: not schedule.playing)  # played out: the ring released it
    assert schedule.stats.sweeps == 0
    for call in calls:  # then the calls end, all at once
        ticker.leave(call)
    assert schedule.stats.sweeps == 1


# -- who holds what, and giving collection back


async def test_a_ticker_given_no_schedule_leaves_collection_to_cpython():
    ticker = FrameTicker()
    ticker.join(Member(3))
    ticker.wake()
    assert isinstance(ticker.collection, NoSchedule)
    assert gc.isenabled()
    await until(lambda: ticker.rings == 3)
    assert gc.isenabled()


async def test_closing_a_schedule_gives_collection_back_even_while_a_ticker_plays(
        schedules, quick_beat):
    schedule = schedules()
    member = Member(1_000_000, churn)
    ticker = playing(schedule, member)
    await until(lambda: schedule.stats.collections[2] >= 1)
    assert gc.get_freeze_count() > 0 and not gc.isenabled()
    schedule.close()
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    collections, rings = list(schedule.stats.collections), ticker.rings
    await until(lambda: ticker.rings >= rings + 8)  # two old collections' worth
    assert schedule.stats.collections == collections  # it does nothing any more
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    ticker.leave(member)
    assert schedule.stats.sweeps == 0


async def test_a_schedule_given_to_a_playing_ticker_takes_over_from_the_one_it_held(
        schedules):
    before, after = schedules(), schedules()
    member = Member(1_000_000)
    ticker = playing(before, member)
    assert before.playing and not gc.isenabled()
    ticker.collect_with(after)
    assert not before.playing and after.playing and after.players == 1
    assert not gc.isenabled()  # still off: the new schedule holds it
    rings = after.stats.collections[0]
    await until(lambda: after.stats.collections[0] > rings)
    ticker.leave(member)
    await until(lambda: not after.playing)
    assert gc.isenabled()
