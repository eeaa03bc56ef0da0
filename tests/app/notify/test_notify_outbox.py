"""The outbox seam: ``enqueue`` writes in the event's own transaction, one row per
enabled target whose events filter takes the event."""

from __future__ import annotations

import pytest

from app import db
from app.notify.outbox import enqueue
from app.piccolo_conf import DB

pytestmark = pytest.mark.anyio


async def _target(connection, account_id, *, events=None, enabled=True) -> str:
    return str(await connection.fetchval(
        "INSERT INTO notify_target (account_id, kind, url_enc, host, events, enabled) "
        "VALUES ($1, 'webhook', 'v1.sealed', 'hooks.example.com', "
        "coalesce($2::text[], ARRAY['message_taken', 'appointment_booked', "
        "'appointment_moved', 'appointment_cancelled']), $3) RETURNING id",
        account_id, events, enabled))


async def _outbox(connection) -> list[dict]:
    rows = await connection.fetch(
        "SELECT target_id::text, event, text, subject_id, status, attempts, idempotency_key "
        "FROM notify_outbox ORDER BY target_id")
    return [dict(row) for row in rows]


async def test_one_row_per_enabled_target_whose_filter_takes_the_event(services):
    owner = await services.accounts.create("owner@example.com", "correct horse battery")
    other = await services.accounts.create("other@example.com", "correct horse battery")
    async with db.connection() as connection:
        every = await _target(connection, owner["id"])
        booked_only = await _target(connection, owner["id"], events=["appointment_booked"])
        await _target(connection, owner["id"], enabled=False)
        await _target(connection, other["id"])
        await enqueue(connection, account_id=owner["id"], event="message_taken",
                      text="Message taken: Jane Smith (+447700900123).")
        rows = await _outbox(connection)
        assert [(row["target_id"], row["event"]) for row in rows] == [(every, "message_taken")]
        assert rows[0]["status"] == "pending" and rows[0]["attempts"] == 0
        await enqueue(connection, account_id=owner["id"], event="appointment_booked",
                      text="Appointment booked", subject_id=owner["id"])
        rows = await _outbox(connection)
    assert sorted(row["target_id"] for row in rows) == sorted([every, every, booked_only])
    assert len({row["idempotency_key"] for row in rows}) == 3


async def test_the_rows_roll_back_with_the_event(services):
    owner = await services.accounts.create("owner@example.com", "correct horse battery")
    async with db.connection() as connection:
        await _target(connection, owner["id"])
    with pytest.raises(RuntimeError):
        async with DB.transaction() as transaction:
            await enqueue(transaction, account_id=owner["id"], event="message_taken",
                          text="Message taken: Jane Smith (+447700900123).")
            raise RuntimeError("the booking failed after the notification was written")
    async with DB.transaction() as transaction:
        await enqueue(transaction, account_id=owner["id"], event="message_taken",
                      text="Message taken: John Doe (number withheld).")
    async with db.connection() as connection:
        assert [row["text"] for row in await _outbox(connection)] == [
            "Message taken: John Doe (number withheld)."]


@pytest.mark.parametrize("event, text", [("call_ended", "x"), ("message_taken", ""),
                                         ("message_taken", "x" * 301)])
async def test_bad_events_and_lines_are_refused(services, event, text):
    owner = await services.accounts.create("owner@example.com", "correct horse battery")
    async with db.connection() as connection:
        await _target(connection, owner["id"])
        with pytest.raises(ValueError):
            await enqueue(connection, account_id=owner["id"], event=event, text=text)
        assert await _outbox(connection) == []
