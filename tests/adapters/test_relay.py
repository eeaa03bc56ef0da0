"""``HandOver`` on its own, between a fake stream and a fake ticker: caller audio read
in the stream's callback reaches the session at the next ring, in order, and the
hand-over ends, giving the stream back, at whatever is not audio."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from adapters.voice.relay import HandOver

pytestmark = pytest.mark.anyio


class FakeStream:
    """Reads what a test ``arrive``s, in its 'read callback' once handed over."""

    def __init__(self, read_before: list[bytes] | None = None) -> None:
        self.waiting = list(read_before or [])
        self.receiver: Callable[[bytes], None] | None = None
        self.handed_back = 0

    def hand_over(self, receiver: Callable[[bytes], None] | None) -> list[bytes]:
        if receiver is None:
            self.handed_back += 1
        self.receiver = receiver
        waiting, self.waiting = self.waiting, []
        return waiting

    def arrive(self, data: bytes) -> None:
        if self.receiver is None:
            self.waiting.append(data)
        else:
            self.receiver(data)


class FakeTicker:
    def __init__(self) -> None:
        self.deferred: list[Callable[[], None]] = []

    def defer(self, work: Callable[[], None]) -> None:
        self.deferred.append(work)

    def ring(self) -> None:
        deferred, self.deferred = self.deferred, []
        for work in deferred:
            work()


def read(data: bytes, hold: Callable[[bytes | str], None]) -> bool:
    """A wire of comma-separated items: ``#5`` a key, ``bye`` a hangup, ``bad`` a
    protocol error, anything else audio."""
    for item in data.split(b","):
        if item == b"bad":
            raise ValueError("broken protocol")
        if item == b"bye":
            return False
        hold(item[1:].decode() if item.startswith(b"#") else item)
    return True


class Session:
    def __init__(self, fail_on: bytes | None = None) -> None:
        self.heard: list[bytes | str] = []
        self.fail_on = fail_on

    def audio(self, pcm: bytes) -> None:
        if pcm == self.fail_on:
            raise RuntimeError("the session failed")
        self.heard.append(pcm)

    def key(self, digit: str) -> None:
        self.heard.append(digit)


def relay(stream: FakeStream, ticker: FakeTicker, session: Session) -> HandOver:
    return HandOver(stream, ticker, read, session.audio, session.key)


async def test_audio_and_keys_read_in_the_callback_reach_the_session_at_the_next_ring():
    stream, ticker, session = FakeStream([b"a0"]), FakeTicker(), Session()
    hand_over = relay(stream, ticker, session)
    ended = anyio.Event()

    async def run() -> None:
        await hand_over.run()
        ended.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run)
        await anyio.sleep(0)
        stream.arrive(b"a1,#5")
        stream.arrive(b"a2")
        assert session.heard == []  # nothing before the ring
        assert len(ticker.deferred) == 1  # one ring asked for, however many chunks
        ticker.ring()
        assert session.heard == [b"a0", b"a1", "5", b"a2"]
        stream.arrive(b"a3")
        ticker.ring()
        assert session.heard[-1] == b"a3" and not ended.is_set()
        tasks.cancel_scope.cancel()


@pytest.mark.parametrize("ending", [b"a2,bye", b""])
async def test_a_hangup_or_the_end_of_the_stream_gives_what_was_held_then_the_stream_back(
        ending):
    stream, ticker, session = FakeStream(), FakeTicker(), Session()
    hand_over = relay(stream, ticker, session)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(hand_over.run)
            await anyio.sleep(0)
            stream.arrive(b"a1")
            stream.arrive(ending)
    assert session.heard == ([b"a1", b"a2"] if ending else [b"a1"])
    assert stream.receiver is None and stream.handed_back == 1
    stream.arrive(b"a3")  # read as usual now: not handed over
    ticker.ring()
    assert stream.waiting == [b"a3"] and b"a3" not in session.heard


async def test_what_ended_the_stream_before_the_hand_over_began_ends_it_at_once():
    stream, ticker, session = FakeStream([b"a1", b""]), FakeTicker(), Session()
    with anyio.fail_after(5):
        await relay(stream, ticker, session).run()
    assert session.heard == [b"a1"] and stream.receiver is None


@pytest.mark.parametrize("fault", ["session", "protocol"])
async def test_a_failure_in_the_callback_is_raised_in_the_relaying_task(fault):
    stream, ticker = FakeStream(), FakeTicker()
    session = Session(fail_on=b"a2" if fault == "session" else None)
    hand_over = relay(stream, ticker, session)
    raised: list[BaseException] = []

    async def run() -> None:
        try:
            await hand_over.run()
        except Exception as exc:
            raised.append(exc)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run)
            await anyio.sleep(0)
            stream.arrive(b"a1,a2,a3" if fault == "session" else b"a1,bad")
            ticker.ring()
    assert [type(exc) for exc in raised] == [RuntimeError if fault == "session" else ValueError]
    assert session.heard == [b"a1"]
    assert stream.receiver is None and stream.handed_back == 1


async def test_a_call_that_ends_first_drops_what_was_held_and_takes_the_stream_back():
    stream, ticker, session = FakeStream(), FakeTicker(), Session()
    hand_over = relay(stream, ticker, session)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(hand_over.run)
        await anyio.sleep(0)
        stream.arrive(b"a1")
        tasks.cancel_scope.cancel()
    assert stream.receiver is None and stream.handed_back == 1
    ticker.ring()  # the ring asked for comes after the end
    assert session.heard == []
