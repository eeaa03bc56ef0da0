"""A call's recording and transcript (play as PCM, erase), and the compliance view:
the call's account or an administrator, anyone else 404; every listen audited."""

from __future__ import annotations

import datetime as dt
import io
import uuid
from pathlib import Path

import asyncpg
import numpy as np
import pytest
import soundfile

from core.voice import RECORDING_SENTENCE, STANDARD_NOTICE
from tests.support.settings import set_runtime

pytestmark = pytest.mark.anyio

RATE = 8000


def write_ulaw_recording(path: Path, seconds: float = 0.5) -> np.ndarray:
    """A two-channel 8 kHz μ-law WAV like a call's (caller left, line right); the
    16-bit samples it was made from come back (before companding)."""
    frames = int(RATE * seconds)
    t = np.arange(frames) / RATE
    caller = (0.4 * np.sin(2 * np.pi * 440 * t) * 32767).astype(np.int16)
    line = (0.2 * np.sin(2 * np.pi * 1000 * t) * 32767).astype(np.int16)
    samples = np.stack([caller, line], axis=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(path, samples, RATE, subtype="ULAW", format="WAV")
    return samples


async def sql(database: str, statement: str, *args):
    connection = await asyncpg.connect(database)
    try:
        return await connection.fetch(statement, *args)
    finally:
        await connection.close()


async def add_line(database, owner_id, **fields) -> uuid.UUID:
    values = {"e164": "+442071234567", "greeting": None, "notice": None,
              "record_calls": False, "recording_days": 0, "transcript_days": 0,
              "log_days": 0, **fields}
    rows = await sql(database,
                     "INSERT INTO telephony_line (e164, owner_user_id, greeting, notice, "
                     "record_calls, recording_days, transcript_days, log_days) "
                     "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
                     values["e164"], owner_id, values["greeting"], values["notice"],
                     values["record_calls"], values["recording_days"],
                     values["transcript_days"], values["log_days"])
    return rows[0]["id"]


async def add_call(database, line_id, owner_id, *, days_ago: float = 0,
                   outcome: str = "completed", transcript: bool = True) -> uuid.UUID:
    started = dt.datetime.now(dt.UTC) - dt.timedelta(days=days_ago)
    chat_id = None
    if transcript:
        [chat] = await sql(database, "INSERT INTO chat (owner_id, source, title) "
                                     "VALUES ($1, 'telephone', 'Call') RETURNING id", owner_id)
        chat_id = chat["id"]
        await sql(database, "INSERT INTO chat_message (chat_id, role, content) VALUES "
                            "($1, 'user', 'My lease ends in May.')", chat_id)
    [call] = await sql(database,
                       "INSERT INTO telephony_call (number_id, e164, from_number, provider, "
                       "owner_id, chat_id, outcome, started_at) VALUES "
                       "($1, '+442071234567', '+447700900123', 'carrier', $2, $3, $4, $5) "
                       "RETURNING id", line_id, owner_id, chat_id, outcome, started)
    return call["id"]


async def account_id(database, email: str) -> uuid.UUID:
    return (await sql(database, "SELECT id FROM account WHERE email = $1", email))[0]["id"]


@pytest.fixture
async def call(api, services, database, boot):
    """A recorded call on the owner's line, with its transcript and recording."""
    headers = {name: await api.as_new_user(services, f"{name}@example.com", role=role)
               for name, role in (("owner", "user"), ("stranger", "user"), ("admin", "admin"))}
    owner = await account_id(database, "owner@example.com")
    line = await add_line(database, owner, record_calls=True, recording_days=30)
    call_id = await add_call(database, line, owner)
    path = Path(boot["storage.recordings_dir"]) / f"{call_id}.wav"
    samples = write_ulaw_recording(path)
    return {"id": call_id, "path": path, "samples": samples, "headers": headers,
            "owner": owner, "line": line}


async def test_the_recording_plays_as_16_bit_pcm_and_each_listen_is_audited(api, call,
                                                                             database):
    response = await api.get(f"/api/telephony/calls/{call['id']}/recording",
                             headers=call["headers"]["owner"])
    assert response.status_code == 200
    assert response.headers["content-type"] == "audio/wav"
    assert int(response.headers["content-length"]) == len(response.content)
    played, rate = soundfile.read(io.BytesIO(response.content), dtype="int16")
    info = soundfile.info(io.BytesIO(response.content))
    assert (info.subtype, info.channels, rate) == ("PCM_16", 2, RATE)
    assert played.shape == call["samples"].shape
    # μ-law keeps about 2 % of the amplitude: the decode is the companding's inverse.
    assert np.max(np.abs(played.astype(int) - call["samples"].astype(int))) < 0.03 * 32767
    assert (await api.get(f"/api/telephony/calls/{call['id']}/recording",
                          headers=call["headers"]["admin"])).status_code == 200
    entries = await sql(database, "SELECT kind, actor_id, subject FROM audit_entry "
                                  "WHERE kind = 'telephony.recording.played' ORDER BY id")
    assert [row["subject"] for row in entries] == [str(call["id"])] * 2
    assert entries[0]["actor_id"] == call["owner"]


async def test_anyone_else_gets_404_and_nothing_changes(api, call, database):
    stranger = call["headers"]["stranger"]
    base = f"/api/telephony/calls/{call['id']}"
    answers = [await api.get(f"{base}/recording", headers=stranger),
               await api.delete(f"{base}/recording", headers=stranger),
               await api.delete(f"{base}/transcript", headers=stranger),
               await api.get(f"/api/telephony/calls/{uuid.uuid4()}/recording", headers=stranger),
               await api.get("/api/telephony/calls/nonsense/recording", headers=stranger)]
    assert [answer.status_code for answer in answers] == [404] * 5
    assert answers[0].json() == answers[3].json()  # the same 404 as for no call at all
    assert call["path"].exists()
    [row] = await sql(database, "SELECT chat_id, tidied_at FROM telephony_call")
    assert row["chat_id"] is not None and row["tidied_at"] is None
    assert not await sql(database, "SELECT 1 FROM audit_entry "
                                   "WHERE kind = 'telephony.recording.played'")


async def test_deleting_the_recording_keeps_the_call_and_conversation(api, call, database):
    owner = call["headers"]["owner"]
    path = f"/api/telephony/calls/{call['id']}/recording"
    assert (await api.delete(path, headers=owner)).status_code == 204
    assert not call["path"].exists()
    again = await api.get(path, headers=owner)
    assert again.status_code == 404 and again.json()["error"]["code"] == "no_recording"
    assert (await api.delete(path, headers=owner)).status_code == 404
    [row] = await sql(database, "SELECT chat_id, tidied_at FROM telephony_call")
    assert row["chat_id"] is not None and row["tidied_at"] is None


async def test_deleting_the_transcript_removes_conversation_and_recording(api, call,
                                                                           database):
    response = await api.delete(f"/api/telephony/calls/{call['id']}/transcript",
                                headers=call["headers"]["admin"])
    assert response.status_code == 200
    assert response.json() == {"id": str(call["id"]), "tidied_away": True,
                               "conversation_removed": True, "recording_removed": True}
    assert not call["path"].exists()
    [row] = await sql(database, "SELECT chat_id, tidied_at FROM telephony_call")
    assert row["chat_id"] is None and row["tidied_at"] is not None
    assert await sql(database, "SELECT 1 FROM chat_message") == []
    listed = await api.get(f"/api/admin/telephony/calls/{call['id']}",
                           headers=call["headers"]["admin"])
    assert listed.json()["tidied_away"] is True


async def test_a_call_in_progress_is_not_erased(api, call, database):
    await sql(database, "UPDATE telephony_call SET outcome = 'in_progress'")
    base = f"/api/telephony/calls/{call['id']}"
    for path in (f"{base}/transcript", f"{base}/recording"):
        response = await api.delete(path, headers=call["headers"]["owner"])
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "call_in_progress"
    assert call["path"].exists()


async def test_the_compliance_view_says_what_callers_hear(api, services, database):
    owner = await api.as_new_user(services, "owner@example.com")
    stranger = await api.as_new_user(services, "stranger@example.com")
    admin = await api.as_new_user(services, "admin@example.com", role="admin")
    owner_id = await account_id(database, "owner@example.com")
    stranger_id = await account_id(database, "stranger@example.com")
    await add_line(database, owner_id, e164="+442071234567", greeting="Smith & Co.",
                   notice="Hello, this is the Smith & Co. assistant. Ask for a person any time.",
                   record_calls=True, recording_days=90, transcript_days=30, log_days=365)
    await add_line(database, owner_id, e164="+442071234568")
    await add_line(database, stranger_id, e164="+442079999999")
    await sql(database, "INSERT INTO screening_name (account_id, name, normal_form) VALUES "
                        "($1, 'Acme Ltd', 'acme'), ($1, 'John Smith', 'john smith')", owner_id)
    response = await api.get("/api/telephony/compliance", headers=owner)
    assert response.status_code == 200
    first, second = response.json()["data"]
    assert first["e164"] == "+442071234567"
    assert first["recording"] == {"on": True, "days": 90}
    assert first["retention"] == {"transcript_days": 30, "log_days": 365, "recording_days": 90}
    assert first["opening"] == ("Smith & Co. Hello, this is the Smith & Co. assistant. "
                                f"{RECORDING_SENTENCE} Ask for a person any time.")
    assert first["standard_notice"] is False
    assert first["screening_list"] == {"exists": True, "size": 2}
    assert "Acme" not in response.text
    assert first["notifications"] == {"on": False, "switched_on": False, "enabled_targets": 0}
    assert second["opening"] == STANDARD_NOTICE and second["recording"]["on"] is False
    assert second["standard_notice"] is True
    # notifications count as on once switched on and the account has a target
    await set_runtime(services, "notifications.enabled", True)
    await services.notify_targets.create(
        await services.sessions.identify(owner["Authorization"].split()[1]),
        kind="chat_a", url="https://hooks.example.com/x")
    again = (await api.get("/api/telephony/compliance", headers=owner)).json()["data"][0]
    assert again["notifications"] == {"on": True, "switched_on": True, "enabled_targets": 1}
    theirs = (await api.get("/api/telephony/compliance", headers=stranger)).json()["data"]
    assert [line["e164"] for line in theirs] == ["+442079999999"]
    peek = await api.get(f"/api/telephony/compliance?account_id={owner_id}", headers=stranger)
    assert peek.status_code == 404
    every = (await api.get("/api/telephony/compliance", headers=admin)).json()["data"]
    assert len(every) == 3
    one = await api.get(f"/api/telephony/compliance?account_id={owner_id}", headers=admin)
    assert len(one.json()["data"]) == 2
