"""The outbox worker against a loopback receiver: retries with backoff and exactly one
delivery, the idempotency key over retries and over a worker killed mid-post, two
workers on one database, the switch, the egress gate, and every attempt recorded."""

from __future__ import annotations

import datetime as dt
import os
import signal
import sys
import time
import uuid
from pathlib import Path

import anyio
import asyncpg
import pytest

from app import db
from app.notify.outbox import enqueue
from app.notify.worker import OutboxWorker
from app.services.accounts import Identity
from core.notifications import SIGNATURE_HEADER, verify_signature
from tests.support.http import running_app
from tests.support.receiver import Receiver
from tests.support.settings import allow_loopback, set_runtime

pytestmark = pytest.mark.anyio

LINE = "Appointment booked for Tuesday 3 March at 2:30 pm: Jane Smith (+447700900123)."


def no_wait(attempt: int, jitter: float) -> float | None:
    """The retry schedule without its waiting: the test moves time on by itself."""
    return 0.0 if attempt < 10 else None


@pytest.fixture
async def owner(services) -> Identity:
    row = await services.accounts.create("owner@example.com", "correct horse battery")
    return Identity(account_id=row["id"], email=row["email"], role="user",
                    permissions=frozenset())


@pytest.fixture
async def switched_on(services):
    await allow_loopback(services)
    await set_runtime(services, "notifications.enabled", True)


def worker(services, **options) -> OutboxWorker:
    return OutboxWorker(services.settings, services.box, services.notify_sender, **options)


async def _target(services, owner, url: str, kind: str = "webhook") -> dict:
    view, secret = await services.notify_targets.create(owner, kind=kind, url=url)
    return {**view, "secret": secret}


async def _event(owner, subject_id=None, text=LINE, event="appointment_booked") -> None:
    async with db.connection() as connection:
        async with connection.transaction():
            await enqueue(connection, account_id=owner.account_id, event=event, text=text,
                          subject_id=subject_id)


async def _rows(database, sql: str, *args) -> list[dict]:
    connection = await asyncpg.connect(database)
    try:
        return [dict(row) for row in await connection.fetch(sql, *args)]
    finally:
        await connection.close()


async def _outbox(database) -> list[dict]:
    return await _rows(database, "SELECT id, status, attempts, next_attempt_at, last_error, "
                                 "idempotency_key FROM notify_outbox ORDER BY created_at")


async def _attempts(database) -> list[tuple]:
    rows = await _rows(database, "SELECT number, result, status_code FROM notify_attempt "
                                 "ORDER BY id")
    return [(row["number"], row["result"], row["status_code"]) for row in rows]


async def test_fails_twice_then_delivers_exactly_once(services, owner, switched_on, database):
    receiver = Receiver(script=[500, 503])
    appointment = uuid.uuid4()
    async with receiver as base:
        target = await _target(services, owner, f"{base}/hook")
        await _event(owner, appointment)
        posting = worker(services, schedule=no_wait)
        assert [await posting.run_once() for _ in range(4)] == [1, 1, 1, 0]
    assert len(receiver.received) == 3 and len(receiver.acted_on) == 1
    keys = {got.headers["Idempotency-Key"] for got in receiver.received}
    [row] = await _outbox(database)
    assert keys == {row["idempotency_key"]}
    assert (row["status"], row["attempts"], row["last_error"]) == ("delivered", 3, None)
    assert await _attempts(database) == [(1, "failed", 500), (2, "failed", 503),
                                         (3, "delivered", 200)]
    delivered = receiver.received[-1]
    assert delivered.json()["event"] == "appointment_booked"
    assert delivered.json()["text"] == LINE
    assert delivered.json()["ids"] == {"appointment_id": str(appointment)}
    assert verify_signature(target["secret"].encode(), delivered.body,
                            delivered.headers[SIGNATURE_HEADER], int(time.time()))


async def test_a_failure_waits_by_the_retry_schedule(services, owner, switched_on, database):
    receiver = Receiver(script=[500])
    async with receiver as base:
        await _target(services, owner, f"{base}/hook", kind="chat_a")
        await _event(owner)
        before = dt.datetime.now(dt.UTC)
        posting = worker(services)
        assert await posting.run_once() == 1
        assert await posting.run_once() == 0  # not due yet
    [row] = await _outbox(database)
    assert row["status"] == "pending" and row["attempts"] == 1
    wait = (row["next_attempt_at"] - before).total_seconds()
    assert 30 <= wait <= 36 + 60  # 30 s, up to a fifth more of jitter, the test's own run
    assert receiver.received[0].json() == {"text": LINE}


@pytest.mark.parametrize("status", [400, 404, 410])
async def test_an_answer_that_will_not_change_is_not_retried(services, owner, switched_on,
                                                             database, status):
    receiver = Receiver(script=[status])
    async with receiver as base:
        await _target(services, owner, f"{base}/hook")
        await _event(owner)
        posting = worker(services, schedule=no_wait)
        assert [await posting.run_once() for _ in range(2)] == [1, 0]
    [row] = await _outbox(database)
    assert (row["status"], row["last_error"]) == ("failed", f"answered HTTP {status}")


async def test_the_last_attempt_gives_up(services, owner, switched_on, database):
    receiver = Receiver(script=[500] * 3)
    async with receiver as base:
        await _target(services, owner, f"{base}/hook")
        await _event(owner)
        posting = worker(services, schedule=lambda attempt, jitter: 0.0 if attempt < 3 else None)
        assert [await posting.run_once() for _ in range(4)] == [1, 1, 1, 0]
    [row] = await _outbox(database)
    assert (row["status"], row["attempts"]) == ("failed", 3)


async def test_nothing_is_sent_while_notifications_are_off(services, owner, database):
    await allow_loopback(services)
    receiver = Receiver()
    async with receiver as base:
        await _target(services, owner, f"{base}/hook")
        await _event(owner)
        assert await worker(services).run_once() == 1
        await set_runtime(services, "notifications.enabled", True)
        assert await worker(services).run_once() == 0  # no backlog when switched on
    [row] = await _outbox(database)
    assert (row["status"], row["attempts"]) == ("suppressed", 0)
    assert receiver.received == [] and await _attempts(database) == []


async def test_a_target_switched_off_after_the_event_gets_nothing(services, owner,
                                                                  switched_on, database):
    receiver = Receiver()
    async with receiver as base:
        target = await _target(services, owner, f"{base}/hook")
        await _event(owner)
        await services.notify_targets.update(owner, target["id"], {"enabled": False})
        assert await worker(services).run_once() == 1
    assert (await _outbox(database))[0]["status"] == "suppressed" and receiver.received == []


async def test_every_post_passes_the_egress_gate(services, owner, switched_on, database):
    receiver = Receiver()
    async with receiver as base:
        await _target(services, owner, f"{base}/hook")
        await _event(owner)
        await set_runtime(services, "egress.allow_hosts", "")  # the administrator withdraws it
        assert await worker(services, schedule=no_wait).run_once() == 1
    [row] = await _outbox(database)
    assert row["status"] == "failed" and "loopback" in row["last_error"]
    assert await _attempts(database) == [(1, "refused", None)] and receiver.received == []


async def test_two_workers_never_post_one_row_twice(services, owner, switched_on, database):
    receiver = Receiver()
    async with receiver as base:
        await _target(services, owner, f"{base}/hook")
        for number in range(24):
            await _event(owner, text=f"Message taken: caller {number}.", event="message_taken")
        first, second = worker(services, batch_size=4), worker(services, batch_size=4)

        async def drain(posting: OutboxWorker) -> None:
            while await posting.run_once():
                pass

        async with anyio.create_task_group() as both:
            both.start_soon(drain, first)
            both.start_soon(drain, second)
    keys = [got.headers["Idempotency-Key"] for got in receiver.received]
    assert len(keys) == 24 and len(set(keys)) == 24
    assert {row["status"] for row in await _outbox(database)} == {"delivered"}


_KILLED_WORKER = """
import asyncio, os
from app import db
from app.bundle import Services
from app.config import BootConfig

async def main():
    db.use_database(os.environ["WORKER_DSN"])
    await db.open_pool(max_size=3)
    services = Services.build(BootConfig({"message_encryption_key": os.environ["WORKER_KEY"],
                                          "storage.data_dir": os.environ["WORKER_DATA"]}))
    await services.outbox_worker.run_once()

asyncio.run(main())
"""


async def test_a_worker_killed_mid_post_and_restarted_delivers_once(
        services, owner, switched_on, database, encryption_key, tmp_path):
    """The first worker is a process of its own, killed (SIGKILL) while the receiver
    holds its post; the receiver had acted on it. The next worker posts the row again
    under the same key, and the receiver drops the repeat."""
    receiver, release = Receiver(), anyio.Event()
    receiver.release = release
    async with receiver as base:
        await _target(services, owner, f"{base}/hook")
        await _event(owner)
        environment = {**os.environ, "WORKER_DSN": database, "WORKER_KEY": encryption_key,
                       "WORKER_DATA": str(tmp_path / "worker"),
                       "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
        process = await anyio.open_process([sys.executable, "-c", _KILLED_WORKER],
                                           env=environment)
        try:
            with anyio.fail_after(120):
                await receiver.holding.wait()
        finally:
            process.send_signal(signal.SIGKILL)
            await process.wait()
        assert process.returncode == -signal.SIGKILL
        release.set()  # the receiver acts on the post nobody hears answered
        assert await _attempts(database) == [(1, "in_flight", None)]
        restarted = worker(services, schedule=no_wait)
        with anyio.fail_after(60):  # until PostgreSQL has seen the dead connection go
            while await restarted.run_once() == 0:
                await anyio.sleep(0.05)
    first, second = receiver.received
    assert first.headers["Idempotency-Key"] == second.headers["Idempotency-Key"]
    assert first.body == second.body
    assert len(receiver.acted_on) == 1
    [row] = await _outbox(database)
    assert (row["status"], row["attempts"]) == ("delivered", 2)
    assert await _attempts(database) == [(1, "interrupted", None), (2, "delivered", 200)]


async def test_the_background_worker_posts_without_anyone_waiting(services, owner,
                                                                  switched_on, database):
    receiver = Receiver()
    async with receiver as base:
        await _target(services, owner, f"{base}/hook", kind="chat_b")
        background = worker(services, poll_seconds=0.05)
        background.start()
        try:
            await _event(owner)  # returns at once: posting is the worker's business
            with anyio.fail_after(60):
                await receiver.arrived.wait()
        finally:
            await background.stop()
    assert receiver.received[0].json()["@type"] == "MessageCard"


async def test_news_of_one_subject_arrives_in_order(services, owner, switched_on, database):
    """A booking being retried is not overtaken by its cancellation; another subject's
    news is not held up meanwhile."""
    def fail_the_first_booking(got) -> int | None:
        if got.json()["text"] == "Booked." and not failed:
            failed.append(got)
            return 500
        return None

    failed: list = []
    receiver = Receiver(decide=fail_the_first_booking)
    appointment, other = uuid.uuid4(), uuid.uuid4()
    async with receiver as base:
        await _target(services, owner, f"{base}/hook")
        await _event(owner, appointment, text="Booked.")
        await _event(owner, appointment, text="Cancelled.", event="appointment_cancelled")
        await _event(owner, other, text="Other booked.")
        posting = worker(services, schedule=no_wait)
        while await posting.run_once():
            pass
    texts = [got.json()["text"] for got in receiver.received]
    assert [text for text in texts if text != "Other booked."] == [
        "Booked.", "Booked.", "Cancelled."]
    # the other subject went out in the first batch, beside the booking that failed
    assert texts.count("Other booked.") == 1 and texts.index("Other booked.") < 2


async def test_the_server_runs_the_worker_from_start_to_stop(services, owner, switched_on):
    receiver = Receiver()
    services.outbox_worker.poll_seconds = 0.05
    async with receiver as base:
        await _target(services, owner, f"{base}/hook")
        async with running_app(services, scheduled_jobs=True):
            assert services.outbox_worker.running
            await _event(owner)
            with anyio.fail_after(60):
                await receiver.arrived.wait()
        assert not services.outbox_worker.running  # stopped with the server
    assert len(receiver.received) == 1


async def test_the_owner_sees_each_attempt_and_a_stranger_does_not(api, services, owner,
                                                                   switched_on):
    receiver = Receiver(script=[500])
    async with receiver as base:
        headers = {"Authorization": "Bearer " + await _session(services, owner)}
        target = await _target(services, owner, f"{base}/hook")
        await _event(owner)
        posting = worker(services, schedule=no_wait)
        while await posting.run_once():
            pass
        await api.post(f"/api/notify-targets/{target['id']}/test", headers=headers)
    listed = await api.get(f"/api/notify-targets/{target['id']}/attempts", headers=headers)
    assert [(a["event"], a["number"], a["result"], a["status_code"])
            for a in listed.json()["data"]] == [
        ("test", 1, "delivered", 200), ("appointment_booked", 2, "delivered", 200),
        ("appointment_booked", 1, "failed", 500)]
    assert LINE not in listed.text
    stranger = await api.as_new_user(services, "stranger@example.com")
    assert (await api.get(f"/api/notify-targets/{target['id']}/attempts",
                          headers=stranger)).status_code == 404


async def _session(services, identity: Identity) -> str:
    token, _ = await services.sessions.open(identity.account_id)
    return token


async def test_finished_notifications_are_swept_after_thirty_days(services, owner,
                                                                  switched_on, database):
    receiver = Receiver(script=[404])
    async with receiver as base:
        await _target(services, owner, f"{base}/hook")
        for text in ("Refused with 404.", "Delivered.", "Pending."):
            await _event(owner, text=text)
        await worker(services, batch_size=2, schedule=no_wait).run_once()
    await _rows(database, "UPDATE notify_outbox SET finished_at = finished_at - interval "
                          "'31 days', next_attempt_at = now() + interval '1 day' "
                          "WHERE status <> 'pending'")
    counts = await services.retention.sweep(dt.datetime.now(dt.UTC))
    assert counts["notifications"] == 2
    assert [row["status"] for row in await _outbox(database)] == ["pending"]
    assert await _attempts(database) == []


async def test_a_target_that_cannot_be_unsealed_fails_closed(services, owner, switched_on,
                                                             database):
    """After the encryption key changed, neither the url nor the signing secret opens:
    nothing is posted (least of all unsigned), and the row fails for good."""
    receiver = Receiver()
    async with receiver as base:
        await _target(services, owner, f"{base}/hook")
        await _rows(database, "UPDATE notify_target SET secret_enc = 'v1.AAAA'")
        await _event(owner)
        assert await worker(services, schedule=no_wait).run_once() == 1
    [row] = await _outbox(database)
    assert row["status"] == "failed" and "cannot be read" in row["last_error"]
    assert receiver.received == [] and await _attempts(database) == [(1, "failed", None)]


async def test_deleting_a_target_while_its_news_is_posted_neither_hangs_nor_leaves_rows(
        services, owner, switched_on, database):
    receiver, release = Receiver(), anyio.Event()
    receiver.release = release
    outcome: dict[str, object] = {}
    async with receiver as base:
        target = await _target(services, owner, f"{base}/hook")
        await _event(owner, text="First.")
        await _event(owner, text="Second.")  # needs the target's key once the first is done
        posting = worker(services, schedule=no_wait)

        async def post() -> None:
            try:
                outcome["posted"] = await posting.run_once()
            except Exception as exc:  # the claim gave way to the deletion
                outcome["posted"] = type(exc).__name__

        async def delete() -> None:
            await services.notify_targets.delete(owner, target["id"])
            outcome["deleted"] = True

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(post)
                await receiver.holding.wait()
                tasks.start_soon(delete)
                while not await _rows(  # until the deletion waits for the claimed row
                        database, "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = "
                                  "'Lock' AND datname = current_database()"):
                    await anyio.sleep(0.02)
                release.set()
    assert outcome["deleted"] is True and outcome["posted"] is not None
    assert await _outbox(database) == [] and await _attempts(database) == []
    assert await _rows(database, "SELECT 1 FROM notify_target") == []


async def test_a_receiver_that_hangs_does_not_hold_up_the_others(services, owner,
                                                                 switched_on, database):
    slow, release, quick = Receiver(), anyio.Event(), Receiver()
    slow.release = release
    async with slow as slow_base, quick as quick_base:
        await _target(services, owner, f"{slow_base}/hook")
        await _target(services, owner, f"{quick_base}/hook")
        await _event(owner)
        posting = worker(services)
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(posting.run_once)
                await slow.holding.wait()
                await quick.arrived.wait()  # while the slow one still holds its post
                release.set()
    assert len(slow.received) == len(quick.received) == 1
    assert {row["status"] for row in await _outbox(database)} == {"delivered"}
