"""The daily sweep over telephone lines: nothing unless some line has a period; each
period removes exactly its part; orphaned recordings go; appointments, enquiries and
the screening list stay; only counts are audited."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path

import pytest

from tests.app.telephony.test_call_records import add_call, add_line, sql, write_ulaw_recording

pytestmark = pytest.mark.anyio


async def owner_account(services) -> uuid.UUID:
    return (await services.accounts.create("owner@example.com", "correct horse battery"))["id"]


def record(boot, call_id) -> Path:
    path = Path(boot["storage.recordings_dir"]) / f"{call_id}.wav"
    write_ulaw_recording(path, seconds=0.1)
    return path


async def swept_audits(database) -> list[dict]:
    rows = await sql(database, "SELECT data FROM audit_entry "
                               "WHERE kind = 'telephony.retention.swept' ORDER BY id")
    return [json.loads(row["data"]) if isinstance(row["data"], str) else row["data"]
            for row in rows]


async def test_nothing_happens_unless_some_line_has_a_period(services, database, boot):
    owner = await owner_account(services)
    line = await add_line(database, owner)
    old = await add_call(database, line, owner, days_ago=4000)
    recording = record(boot, old)
    orphan = record(boot, uuid.uuid4())
    counts = await services.retention.sweep(dt.datetime.now(dt.UTC))
    assert "telephony" not in counts
    assert recording.exists() and orphan.exists()
    [row] = await sql(database, "SELECT chat_id, tidied_at FROM telephony_call")
    assert row["chat_id"] is not None and row["tidied_at"] is None
    assert await swept_audits(database) == []


async def test_each_period_removes_its_part_and_nothing_else(services, database, boot):
    owner = await owner_account(services)
    transcripts = await add_line(database, owner, e164="+442070000001", transcript_days=30)
    logs = await add_line(database, owner, e164="+442070000002", log_days=60)
    recordings = await add_line(database, owner, e164="+442070000003", record_calls=True,
                                recording_days=10)
    calls = {
        "transcript_old": await add_call(database, transcripts, owner, days_ago=40),
        "transcript_new": await add_call(database, transcripts, owner, days_ago=5),
        "transcript_running": await add_call(database, transcripts, owner, days_ago=40,
                                             outcome="in_progress"),
        "log_old": await add_call(database, logs, owner, days_ago=70),
        "log_new": await add_call(database, logs, owner, days_ago=10),
        "recording_old": await add_call(database, recordings, owner, days_ago=20),
        "recording_new": await add_call(database, recordings, owner, days_ago=2),
    }
    files = {name: record(boot, call_id) for name, call_id in calls.items()}
    orphan = record(boot, uuid.uuid4())
    not_ours = Path(boot["storage.recordings_dir"]) / "notes.txt"
    not_ours.write_text("kept")
    await sql(database, "INSERT INTO enquiry (account_id, call_id, subject, message) "
                        "VALUES ($1, $2, 'Lease', 'Call me back')", owner, calls["log_old"])
    await sql(database, "INSERT INTO appointment (account_id, reference, starts_at, ends_at, "
                        "caller_name, subject, call_id) VALUES ($1, 'K7Q2', now() - interval "
                        "'65 days', now() - interval '65 days' + interval '30 minutes', "
                        "'Jane Smith', 'Lease', $2)", owner, calls["log_old"])
    await sql(database, "INSERT INTO screening_name (account_id, name, normal_form) "
                        "VALUES ($1, 'Acme Ltd', 'acme')", owner)

    counts = (await services.retention.sweep(dt.datetime.now(dt.UTC)))["telephony"]

    assert counts == {"calls": 1, "conversations": 2, "recordings": 2, "orphan_recordings": 1}
    rows = {row["id"]: row for row in await sql(
        database, "SELECT id, chat_id, tidied_at FROM telephony_call")}
    assert calls["log_old"] not in rows and len(rows) == 6
    old = rows[calls["transcript_old"]]
    assert old["chat_id"] is None and old["tidied_at"] is not None
    for kept in ("transcript_new", "transcript_running", "log_new", "recording_old",
                 "recording_new"):
        assert rows[calls[kept]]["chat_id"] is not None, kept
        assert rows[calls[kept]]["tidied_at"] is None, kept
    gone_files = {name for name, path in files.items() if not path.exists()}
    assert gone_files == {"log_old", "recording_old"}
    assert not orphan.exists() and not_ours.read_text() == "kept"
    [enquiry] = await sql(database, "SELECT call_id FROM enquiry")
    [appointment] = await sql(database, "SELECT call_id, state FROM appointment")
    assert enquiry["call_id"] is None and appointment["call_id"] is None
    assert len(await sql(database, "SELECT 1 FROM screening_name")) == 1
    assert len(await sql(database, "SELECT 1 FROM chat")) == 5
    assert await swept_audits(database) == [counts]

    again = (await services.retention.sweep(dt.datetime.now(dt.UTC)))["telephony"]
    assert again == {"calls": 0, "conversations": 0, "recordings": 0, "orphan_recordings": 0}
    assert await swept_audits(database) == [counts, again]
