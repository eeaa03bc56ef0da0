"""A connection's one timer for its deadlines (``adapters.deadline``): never later
than the deadline that is due, and not made again for every request of a kept-alive
connection."""

from __future__ import annotations

from adapters.deadline import Deadline


class Handle:
    def __init__(self, when: float, callback) -> None:
        self._when, self.callback, self.cancelled = when, callback, False

    def when(self) -> float:
        return self._when

    def cancel(self) -> None:
        self.cancelled = True


class Loop:
    def __init__(self) -> None:
        self.now = 0.0
        self.made: list[Handle] = []

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback) -> Handle:
        self.made.append(Handle(when, callback))
        return self.made[-1]


def _deadline() -> tuple[Deadline, Loop, list[float]]:
    loop, expired = Loop(), []
    deadline = Deadline(loop, lambda: expired.append(loop.now))  # type: ignore[arg-type]
    return deadline, loop, expired


def _fire(loop: Loop) -> None:
    pending = [handle for handle in loop.made if not handle.cancelled]
    handle = pending[-1]
    loop.now = handle.when()
    handle.cancelled = True  # fired
    handle.callback()


def test_requests_on_a_kept_alive_connection_reuse_the_one_timer():
    deadline, loop, expired = _deadline()
    for start in (0.0, 1.0, 2.0, 3.0):
        loop.now = start
        deadline.set(10)  # the headers
        deadline.set(30)  # the body
        deadline.lift()  # answered
    assert len(loop.made) == 1 and expired == []
    _fire(loop)  # early: nothing is due, and nothing waits
    assert len(loop.made) == 1 and expired == []


def test_the_timer_waits_again_for_a_later_deadline_and_expires_it_on_time():
    deadline, loop, expired = _deadline()
    deadline.set(10)
    loop.now = 4.0
    deadline.set(30)  # the body is due at 34
    _fire(loop)
    assert loop.now == 10.0 and expired == []
    _fire(loop)
    assert expired == [34.0]


def test_an_earlier_deadline_than_the_timer_gets_a_timer_of_its_own():
    deadline, loop, expired = _deadline()
    deadline.set(30)
    deadline.set(5)
    assert loop.made[0].cancelled and loop.made[1].when() == 5.0
    _fire(loop)
    assert expired == [5.0]


def test_a_stopped_deadline_lets_its_timer_go_and_never_expires():
    deadline, loop, expired = _deadline()
    deadline.set(10)
    assert deadline.is_set
    deadline.stop()
    assert loop.made[0].cancelled and not deadline.is_set
    loop.now = 11.0
    loop.made[0].callback()  # even were the cancelled timer to run
    assert expired == [] and len(loop.made) == 1


def test_an_expired_deadline_is_no_longer_set_and_may_be_set_again():
    deadline, loop, expired = _deadline()
    deadline.set(5)
    _fire(loop)
    assert expired == [5.0] and not deadline.is_set
    deadline.set(5)
    _fire(loop)
    assert expired == [5.0, 10.0]


def test_a_timer_firing_within_a_millisecond_of_the_deadline_expires_it():
    deadline, loop, expired = _deadline()
    deadline.set(0.0103)  # uvloop's timers count whole milliseconds: this one rings at 10
    loop.made[0].cancelled = True
    loop.now = 0.010
    loop.made[0].callback()
    assert expired == [0.010] and len(loop.made) == 1  # not waited for again, to spin
