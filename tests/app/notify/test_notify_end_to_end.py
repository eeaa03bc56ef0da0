"""From the event to the receiver: a booking and a cancellation made over HTTP reach a
webhook target through the outbox and the worker; a refused booking sends nothing."""

from __future__ import annotations

import time

import pytest

from core.notifications import SIGNATURE_HEADER, verify_signature
from tests.app.diary.test_diary_api import book, put_diary
from tests.support.receiver import Receiver
from tests.support.settings import allow_loopback, set_runtime

pytestmark = pytest.mark.anyio


async def test_bookings_reach_the_receiver_once_each_and_refusals_send_nothing(
        api, services, owner):
    await allow_loopback(services)
    await set_runtime(services, "notifications.enabled", True)
    receiver = Receiver(script=[503])  # the first post fails and is retried
    async with receiver as base:
        made = await api.post("/api/notify-targets", headers=owner,
                              json={"kind": "webhook", "url": f"{base}/svc"})
        secret = made.json()["signing_secret"].encode()
        await put_diary(api, owner)
        booked = (await book(api, owner, "2027-03-03T10:00:00Z")).json()
        refused = await book(api, owner, "2027-03-03T10:00:00Z", name="John Brown")
        assert refused.status_code == 409
        assert (await api.delete(f"/api/diary/appointments/{booked['id']}",
                                 headers=owner)).status_code == 200
        services.outbox_worker.schedule = lambda attempt, jitter: 0.0
        while await services.outbox_worker.run_once():
            pass
    delivered = list(receiver.acted_on.values())
    assert [got.json()["event"] for got in delivered] == ["appointment_booked",
                                                          "appointment_cancelled"]
    assert len(receiver.received) == 3  # the failed first post, then one each
    for got in delivered:
        body = got.json()
        assert body["ids"] == {"appointment_id": booked["id"]}
        assert "Jane Smith" in body["text"] and "John Brown" not in body["text"]
        assert len(body["text"]) <= 300
        assert verify_signature(secret, got.body, got.headers[SIGNATURE_HEADER],
                                int(time.time()))
