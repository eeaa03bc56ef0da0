"""The request deadlines' one timer (``app.http.slow_clients``): never later than the
deadline that is due, and not made again for every request of a kept-alive
connection."""

from __future__ import annotations

from app.http.slow_clients import DeadlineHttpProtocol


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


def _protocol() -> tuple[DeadlineHttpProtocol, Loop, list[float]]:
    protocol = DeadlineHttpProtocol.__new__(DeadlineHttpProtocol)
    loop, expired = Loop(), []
    protocol.loop, protocol._deadline, protocol._due = loop, None, None  # type: ignore[assignment]
    protocol._too_slow = lambda: expired.append(loop.now)  # type: ignore[method-assign]
    return protocol, loop, expired


def _fire(loop: Loop) -> None:
    pending = [handle for handle in loop.made if not handle.cancelled]
    handle = pending[-1]
    loop.now = handle.when()
    handle.cancelled = True  # fired
    handle.callback()


def test_requests_on_a_kept_alive_connection_reuse_the_one_timer():
    protocol, loop, expired = _protocol()
    for start in (0.0, 1.0, 2.0, 3.0):
        loop.now = start
        protocol._arm(10)  # the headers
        protocol._arm(30)  # the body
        protocol._disarm()  # answered
    assert len(loop.made) == 1 and expired == []
    _fire(loop)  # early: nothing is due, and nothing waits
    assert len(loop.made) == 1 and expired == []


def test_the_timer_waits_again_for_a_later_deadline_and_expires_it_on_time():
    protocol, loop, expired = _protocol()
    protocol._arm(10)
    loop.now = 4.0
    protocol._arm(30)  # the body is due at 34
    _fire(loop)
    assert loop.now == 10.0 and expired == []
    _fire(loop)
    assert expired == [34.0]


def test_an_earlier_deadline_than_the_timer_gets_a_timer_of_its_own():
    protocol, loop, expired = _protocol()
    protocol._arm(30)
    protocol._arm(5)
    assert loop.made[0].cancelled and loop.made[1].when() == 5.0
    _fire(loop)
    assert expired == [5.0]
