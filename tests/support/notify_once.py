"""Outward notifications posted by a running deployment, counted at a loopback receiver.

Bookings made over HTTP each write one outbox row (``app.notify.outbox``); whichever
server process claims a row posts it. ``bookings_notified`` makes them at once and
returns what the receiver got once every row is settled, so a test can assert that
each notification arrived once although several processes poll the same outbox.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections import Counter

import httpx

from tests.support.receiver import Receiver

#: The diary open all day, every day, in UTC, and bookable from now on.
OPEN_DIARY = {"timezone": "UTC", "slot_minutes": 30, "lead_minutes": 0, "horizon_days": 30,
              "enabled": True,
              "hours": [{"weekday": day, "opens_minute": 0, "closes_minute": 1440}
                        for day in range(7)]}

#: What a deployment must have in force (on every process) before bookings notify.
NOTIFYING = (("egress.allow_hosts", "127.0.0.1"), ("notifications.enabled", True))


def _slots(count: int) -> list[str]:
    """``count`` half-hour slots from tomorrow's midnight (UTC)."""
    tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    start = dt.datetime.combine(tomorrow, dt.time(), dt.UTC)
    return [(start + dt.timedelta(minutes=30 * n)).isoformat().replace("+00:00", "Z")
            for n in range(count)]


async def _settled(client: httpx.AsyncClient, target: str, count: int,
                   receiver: Receiver) -> list[dict]:
    """The target's attempts once ``count`` notifications are delivered and none is in
    flight (an attempt is recorded before its post, so a second post of a row shows)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        attempts = (await client.get(f"/api/notify-targets/{target}/attempts")).json()["data"]
        delivered = sum(a["notification_status"] == "delivered" for a in attempts)
        if (delivered >= count and len(receiver.acted_on) >= count
                and all(a["result"] != "in_flight" for a in attempts)):
            return attempts
        await asyncio.sleep(0.2)
    raise AssertionError(f"{len(receiver.acted_on)} of {count} notifications arrived")


async def bookings_notified(base: str, root: dict[str, str], count: int,
                            hosts: list[str] | None = None) -> tuple[Receiver, list[dict]]:
    """Book ``count`` appointments at once in ``root``'s diary, spread over ``hosts``
    (base URLs; ``[base]`` by default), with a webhook target on a loopback receiver;
    the receiver and the target's attempts, once every notification has been posted.
    The target is deleted afterwards. ``NOTIFYING`` must be in force everywhere."""
    hosts = hosts or [base]
    # Slow answers keep each poller's claim open for a while, so another process's poll
    # comes while rows are claimed and being posted: the moment a second post would happen.
    receiver = Receiver(delay=0.5)
    async with receiver as receiver_url, httpx.AsyncClient(
            base_url=base, headers=root, timeout=30) as client:
        made = await client.post("/api/notify-targets", json={
            "kind": "webhook", "url": f"{receiver_url}/bookings"})
        assert made.status_code == 201, made.text
        target = made.json()["id"]
        try:
            diary = await client.put("/api/diary", json=OPEN_DIARY)
            assert diary.status_code == 200, diary.text
            booked = await asyncio.gather(*[
                client.post(f"{hosts[n % len(hosts)]}/api/diary/appointments", json={
                    "starts_at": starts_at, "caller_name": f"Caller {n}",
                    "subject": "Lease renewal"})
                for n, starts_at in enumerate(_slots(count))])
            assert [b.status_code for b in booked] == [201] * count, [b.text for b in booked]
            attempts = await _settled(client, target, count, receiver)
        finally:
            await client.delete(f"/api/notify-targets/{target}")
    return receiver, attempts


def assert_each_posted_once(receiver: Receiver, attempts: list[dict], count: int) -> None:
    """One post and one recorded attempt per notification, no key twice."""
    keys = Counter(got.headers.get("Idempotency-Key") for got in receiver.received)
    assert len(keys) == count and set(keys.values()) == {1}, keys
    assert len(attempts) == count and all(a["number"] == 1 for a in attempts), attempts
