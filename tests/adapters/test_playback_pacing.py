"""Playback on the shared 20 ms ticker: frames leave from the ticker's ring, one per
call per slot, in a fixed order; producers wait while a call's queue is full; a
barge-in drops what is queued; a busy loop is caught up a frame at a time, within a
bounded debt; a transport may ask for a lead, or for silence while nothing plays; both
a transport that writes at once and one that must await are paced the same way."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
from anyio.abc import TaskGroup
import pytest

from adapters.voice import playback
from adapters.voice.pacing import FrameTicker, frame_ticker
from adapters.voice.playback import QUEUE_FRAMES, Player
from adapters.voice.transport import CallTransport, TransportBroken

pytestmark = pytest.mark.anyio


def frame(number: int) -> bytes:
    return number.to_bytes(2, "little") * 160


class SlotTransport(CallTransport):
    """Logs what the player did, each frame with the ticker's slot it went out in."""

    def __init__(self, name: str, log: list, writes_at_once: bool = True) -> None:
        self.name = name
        self.log = log
        self.writes_at_once = writes_at_once
        self.refuse = 0  # writes to refuse (the peer not keeping up)
        self.stalled = False  # the peer reads nothing: every write refused, sends hang
        self.on_write: Callable[[], None] = lambda: None
        self.broken = False

    def frame_writer(self) -> Callable[[bytes], bool] | None:
        return self._write if self.writes_at_once else None

    def _write(self, pcm: bytes) -> bool:
        if self.broken:
            raise TransportBroken("reset")
        if self.stalled:
            return False
        if self.refuse:
            self.refuse -= 1
            return False
        self.log.append(("frame", self.name, frame_ticker().slot, pcm))
        self.on_write()
        return True

    async def send_frame(self, pcm: bytes) -> None:
        await anyio.sleep(0)  # a send that awaits, as the carrier's WebSocket does
        if self.stalled:
            await anyio.sleep_forever()
        self._write(pcm)

    async def end_of_speech(self, utterance: int) -> None:
        self.log.append(("end_of_speech", self.name, utterance))

    async def stop_playback(self) -> None: ...

    async def receive(self) -> bytes | None: ...

    async def hang_up(self) -> None: ...


def frames_of(log: list, name: str) -> list[tuple[int, bytes]]:
    return [(slot, pcm) for kind, who, *rest in log if kind == "frame" and who == name
            for slot, pcm in [rest]]


@asynccontextmanager
async def running(*players: Player) -> AsyncIterator[TaskGroup]:
    """The players' tasks (more may be started in the group), cancelled at the end."""
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            for player in players:
                tasks.start_soon(player.run)
            yield tasks
            tasks.cancel_scope.cancel()


async def play_all(player: Player, utterance: int, frames: list[bytes]) -> None:
    assert await player.play(utterance, frames)
    await player.finished(utterance).wait()


async def test_each_call_sends_a_frame_per_slot_in_the_order_the_calls_joined():
    log: list = []
    names = ["a", "b", "c"]
    players = [Player(SlotTransport(name, log), lambda u, f: None) for name in names]
    frames = [frame(n) for n in range(40)]  # more than a queue holds
    async with running(*players):
        async with anyio.create_task_group() as producers:
            for player in players:
                producers.start_soon(play_all, player, 1, frames)
    for name in names:
        sent = frames_of(log, name)
        assert [pcm for _, pcm in sent] == frames  # every frame, in order
        slots = [slot for slot, _ in sent]
        # One a slot; two only where a ring came late and caught a missed slot up.
        assert slots == sorted(slots)
        assert max(per_slot(slots).values()) <= 1 + playback.CATCH_UP_FRAMES
    by_slot: dict[int, list[str]] = {}
    for kind, who, *rest in log:
        if kind == "frame":
            by_slot.setdefault(rest[0], []).append(who)
    # In every slot the calls' frames leave in one fixed order: the order they joined.
    for order in by_slot.values():
        assert order == sorted(order, key=names.index)
    assert max(len(set(order)) for order in by_slot.values()) == 3  # the calls share ticks


@pytest.mark.parametrize("writes_at_once", [True, False])
async def test_each_utterance_is_marked_after_its_last_frame_and_before_the_next(
        writes_at_once):
    log: list = []
    player = Player(SlotTransport("a", log, writes_at_once), lambda u, f: None)
    async with running(player):
        await play_all(player, 1, [frame(1), frame(2)])
        await play_all(player, 2, [frame(3)])
    assert [entry[0] if entry[0] == "end_of_speech" else entry[3] for entry in log] == [
        frame(1), frame(2), "end_of_speech", frame(3), "end_of_speech"]
    assert [entry[2] for entry in log if entry[0] == "end_of_speech"] == [1, 2]
    slots = [entry[2] for entry in log if entry[0] == "frame"]
    assert slots == sorted(set(slots))
    assert player.frames_sent == 3


async def test_a_full_queue_makes_the_producer_wait_until_frames_go_out():
    log: list = []
    sent: list[int] = []
    player = Player(SlotTransport("a", log), lambda u, f: sent.append(u))
    frames = [frame(number) for number in range(QUEUE_FRAMES + 5)]
    played = anyio.Event()

    async def produce() -> None:
        await play_all(player, 1, frames)
        played.set()

    async with running() as tasks:
        tasks.start_soon(produce)
        await anyio.wait_all_tasks_blocked()
        assert player.frames_queued == QUEUE_FRAMES  # waiting: nothing plays yet
        tasks.start_soon(player.run)
        await played.wait()
    assert [pcm for _, pcm in frames_of(log, "a")] == frames
    assert sent == [1] * len(frames)


async def test_stop_drops_queued_frames_at_once_and_releases_a_waiting_producer():
    log: list = []

    def barge_in_after_the_third_frame(utterance: int, pcm: bytes) -> None:
        if len(log) == 3:
            player.stop()  # from inside a tick, as the session does on caller audio

    player = Player(SlotTransport("a", log), barge_in_after_the_third_frame)
    producer_stopped = anyio.Event()

    async def produce() -> None:
        if not await player.play(1, [frame(number) for number in range(QUEUE_FRAMES + 10)]):
            producer_stopped.set()

    async with running() as tasks:
        tasks.start_soon(produce)
        await anyio.wait_all_tasks_blocked()  # the queue is full, the producer waits
        finished = player.finished(1)
        tasks.start_soon(player.run)
        await finished.wait()  # set by the stop, not by the frames
        await producer_stopped.wait()  # told, and the frames it held dropped
        assert player.frames_queued == 0
        await play_all(player, 2, [frame(100)])  # the next answer plays normally
    assert [pcm for _, pcm in frames_of(log, "a")] == [frame(0), frame(1), frame(2), frame(100)]


def per_slot(slots: list[int]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for slot in slots:
        counts[slot] = counts.get(slot, 0) + 1
    return counts


async def test_a_busy_loop_is_caught_up_one_extra_frame_a_ring_within_a_bounded_debt():
    log: list = []
    transport = SlotTransport("a", log)
    player = Player(transport, lambda u, f: None)

    skipped_at_start: list[int] = []

    def block_the_loop_at_the_fifth_frame() -> None:
        if len(log) == 1:  # the ticker rings from here on: what it skips now is busy time
            skipped_at_start.append(frame_ticker().slots_skipped)
        if len(log) == 5:
            time.sleep(0.2)  # the process busy for ten slots

    transport.on_write = block_the_loop_at_the_fifth_frame
    async with running(player):
        await play_all(player, 1, [frame(n) for n in range(30)])
    sent = frames_of(log, "a")
    slots = [slot for slot, _ in sent]
    assert [pcm for _, pcm in sent] == [frame(n) for n in range(30)]  # none lost
    assert max(per_slot(slots).values()) <= 1 + playback.CATCH_UP_FRAMES  # no burst
    after = slots[5:]
    # The debt was caught up (two frames a ring for a while), then one a slot again;
    # only the debt beyond MAX_OWED_FRAMES stretched the utterance.
    assert per_slot(after)[after[0]] == 2
    # A loaded machine misses more slots than the block's ten; the bound follows the
    # slots the ticker really missed while the utterance played.
    missed = frame_ticker().slots_skipped - skipped_at_start[0]
    assert missed >= 8
    stretch = slots[-1] - slots[0] + 1 - len(slots)
    assert 0 < stretch <= missed - playback.MAX_OWED_FRAMES + 2


class LeadTransport(SlotTransport):
    lead_frames = 3


@pytest.mark.parametrize("writes_at_once", [True, False])
async def test_a_transport_with_a_lead_gets_it_at_once_then_a_frame_a_slot(writes_at_once):
    log: list = []
    player = Player(LeadTransport("a", log, writes_at_once), lambda u, f: None)
    # The slot each frame was let go in: a transport that awaits sends them after the
    # ring, as the loop gets to it, so the slot they reach it in is not the measure.
    released: list[int] = []
    count_sent = player.pacing.sent

    def sent(frames: int) -> None:
        released.extend([frame_ticker().slot] * frames)
        count_sent(frames)

    player.pacing.sent = sent  # type: ignore[method-assign]
    async with running(player):
        await play_all(player, 1, [frame(n) for n in range(10)])
    counts = list(per_slot(released).values())
    assert counts[0] == 4 and sum(counts) == 10
    assert [pcm for _, pcm in frames_of(log, "a")] == [frame(n) for n in range(10)]


class BusyLineTransport(SlotTransport):
    keeps_line_busy = True


@pytest.mark.parametrize("writes_at_once", [True, False])
async def test_a_line_kept_busy_gets_silence_in_every_slot_without_speech(writes_at_once):
    log: list = []
    sent: list = []
    player = Player(BusyLineTransport("a", log, writes_at_once),
                    lambda u, f: sent.append(f))
    async with running(player):
        await anyio.sleep(0.2)
        await play_all(player, 1, [frame(7)] * 3)
        await anyio.sleep(0.1)
    frames = [pcm for _, pcm in frames_of(log, "a")]
    assert frames.count(bytes(320)) >= 8  # silence before and after the speech
    assert frames.count(frame(7)) == 3 and sent == [frame(7)] * 3  # speech told apart
    assert player.frames_sent == 3 and player.silence_sent >= 8


async def test_a_peer_that_is_not_keeping_up_skips_slots_with_its_frames_kept():
    log: list = []
    transport = SlotTransport("a", log)
    transport.refuse = 3
    player = Player(transport, lambda u, f: None)
    async with running(player):
        await play_all(player, 1, [frame(n) for n in range(4)])
    assert [pcm for _, pcm in frames_of(log, "a")] == [frame(n) for n in range(4)]
    assert player.slots_refused == 3


@pytest.mark.parametrize("writes_at_once", [True, False])
async def test_a_peer_that_reads_nothing_for_too_long_is_taken_as_gone(writes_at_once,
                                                                        monkeypatch):
    monkeypatch.setattr(playback, "STALLED_SECONDS", 0.1)
    log: list = []
    transport = SlotTransport("a", log, writes_at_once)
    player = Player(transport, lambda u, f: None)
    await player.play(1, [frame(n) for n in range(3)])
    with anyio.fail_after(5):
        async with running(player):
            await play_all(player, 1, [frame(0)])  # the peer reads: a frame goes out
        transport.stalled = True
        await player.play(2, [frame(n) for n in range(3)])
        with pytest.raises(TransportBroken, match="read none of its audio for 0.1 s"):
            await player.run()
    assert player.frames_sent == 4


@pytest.mark.parametrize("writes_at_once", [True, False])
async def test_a_busy_line_whose_peer_reads_none_of_its_silence_is_taken_as_gone(
        writes_at_once, monkeypatch):
    monkeypatch.setattr(playback, "STALLED_SECONDS", 0.1)
    transport = BusyLineTransport("a", [], writes_at_once)
    transport.stalled = True
    player = Player(transport, lambda u, f: None)
    with anyio.fail_after(5), pytest.raises(TransportBroken, match="read none"):
        await player.run()  # nothing to say: only silence was ever offered
    assert player.frames_sent == player.silence_sent == 0


async def test_a_peer_that_is_slow_but_reads_is_never_taken_as_gone(monkeypatch):
    monkeypatch.setattr(playback, "STALLED_SECONDS", 0.1)
    log: list = []
    transport = SlotTransport("a", log)
    transport.refuse = 4  # four slots in a row refused, one short of the limit
    player = Player(transport, lambda u, f: None)
    async with running(player):
        await play_all(player, 1, [frame(n) for n in range(3)])
        transport.refuse = 4
        await play_all(player, 2, [frame(n) for n in range(3)])
    assert player.frames_sent == 6


@pytest.mark.parametrize("writes_at_once", [True, False])
async def test_a_broken_connection_is_raised_by_the_players_task(writes_at_once):
    log: list = []
    transport = SlotTransport("a", log, writes_at_once)
    transport.broken = True
    player = Player(transport, lambda u, f: None)
    await player.play(1, [frame(1)])
    with anyio.fail_after(5), pytest.raises(TransportBroken):
        await player.run()


@pytest.mark.parametrize("writes_at_once", [True, False])
async def test_a_ticker_driven_by_a_task_paces_the_same_way(writes_at_once):
    """Off asyncio each player's ticker is driven by a task of its own."""
    log: list = []
    ticker = FrameTicker(driven=True)
    assert ticker.needs_driver
    player = Player(SlotTransport("a", log, writes_at_once), lambda u, f: None, ticker)
    async with running(player):
        await play_all(player, 1, [frame(n) for n in range(5)])
        await play_all(player, 2, [frame(9)])
    assert [entry[0] if entry[0] == "end_of_speech" else entry[3] for entry in log] == [
        *(frame(n) for n in range(5)), "end_of_speech", frame(9), "end_of_speech"]
    # A frame a ring, or two where a ring came late and caught up.
    assert ticker.rings >= 3


async def test_a_frame_handed_to_the_task_before_a_barge_in_is_never_sent():
    """A transport that sends by awaiting: the ticker hands a frame to the player's task
    while that task waits for the previous answer's mark; the caller barges in."""
    log: list = []
    mark_back = anyio.Event()

    class MarkWaits(SlotTransport):
        async def end_of_speech(self, utterance: int) -> None:
            await super().end_of_speech(utterance)
            if utterance == 1:
                await mark_back.wait()

    player = Player(MarkWaits("a", log, writes_at_once=False), lambda u, f: None)
    other = Player(SlotTransport("b", log), lambda u, f: None)  # keeps the ticker ringing
    async with running(player, other) as tasks:
        tasks.start_soon(play_all, other, 1, [frame(n) for n in range(50)])
        assert await player.play(1, [frame(1)])
        player.finished(1)
        while ("end_of_speech", "a", 1) not in log:  # the task now waits for the mark
            await anyio.sleep(0.005)
        assert await player.play(2, [frame(2), frame(3)])
        while player._handed is None:  # the next frame handed, the task still waiting
            await anyio.sleep(0.005)
        player.stop()  # barge-in
        mark_back.set()
        await play_all(player, 3, [frame(4)])
    assert [pcm for _, pcm in frames_of(log, "a")] == [frame(1), frame(4)]


async def test_a_member_failing_at_its_tick_ends_its_own_task_and_no_other():
    log: list = []

    class Faulty(Player):
        def on_tick(self) -> bool:
            raise RuntimeError("a bug in one call")

    faulty = Player.__new__(Faulty)
    Player.__init__(faulty, SlotTransport("a", log), lambda u, f: None)
    healthy = Player(SlotTransport("b", log), lambda u, f: None)
    await faulty.play(1, [frame(1)])
    async with running(healthy):
        with anyio.fail_after(5), pytest.raises(RuntimeError, match="a bug in one call"):
            await faulty.run()
        await play_all(healthy, 1, [frame(n) for n in range(3)])
    assert [pcm for _, pcm in frames_of(log, "b")] == [frame(n) for n in range(3)]


@pytest.mark.parametrize("writes_at_once", [True, False])
async def test_a_broken_connection_is_raised_as_itself_with_a_driven_ticker(writes_at_once):
    transport = SlotTransport("a", [], writes_at_once)
    transport.broken = True
    player = Player(transport, lambda u, f: None, FrameTicker(driven=True))
    await player.play(1, [frame(1)])
    with anyio.fail_after(5), pytest.raises(TransportBroken):
        await player.run()


async def test_a_ticker_rung_by_a_task_serves_one_player():
    ticker = FrameTicker(driven=True)
    ticker.join(Player(SlotTransport("a", []), lambda u, f: None, ticker))
    with pytest.raises(ValueError):
        ticker.join(Player(SlotTransport("b", []), lambda u, f: None, ticker))


@pytest.mark.parametrize("chunk_type", [bytes, bytearray, memoryview])
def test_speech_is_cut_into_whole_frames_whatever_its_chunks(chunk_type):
    size = playback.FRAME_BYTES
    speech = bytes(range(256)) * 9  # 7 frames and 64 bytes
    for cut in (1, 100, size, size + 1, 3 * size - 7, len(speech)):
        framer = playback.Framer()
        frames = []
        for start in range(0, len(speech), cut):
            frames += framer.feed(chunk_type(speech[start:start + cut]))
        last = framer.flush()
        assert all(type(frame) is bytes and len(frame) == size for frame in frames)
        assert last is not None and len(last) == size and framer.flush() is None
        assert b"".join(frames) + last == speech.ljust(8 * size, b"\0")
