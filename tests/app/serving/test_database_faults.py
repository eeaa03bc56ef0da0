"""PostgreSQL stopped in the middle of traffic, then started again.

The service runs on a PostgreSQL of its own here (``adapters.embedded_postgres``), so
stopping it disturbs no other test. While it is down: ``/v1`` answers 503 in the
OpenAI error shape, the rest of ``/api`` 503 in ours, and a carrier call is refused
``lookup_failed`` with ``<Reject/>`` (fail closed, spec: telephony.md "Refusal
reasons"). Once it is back everything works again, and nothing accepted before or
during the fault is lost: every answered completion has its usage row, every account
and call recorded before the fault is still there, and a call taken before the fault
that never got its audio ends with a recorded outcome (``no_media``).
"""

from __future__ import annotations

import datetime as dt
import logging
import xml.etree.ElementTree as ET

import anyio
import pytest

from app.tables import Account, TelephonyCall, UsageEvent
from tests.app.telephony.deployment import SHARED_SECRET

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def _rejected(document: bytes) -> bool:
    return ET.fromstring(document).find("./Reject") is not None


async def test_a_stopped_database_is_503_and_fail_closed_and_nothing_is_lost(rig, caplog):
    # Before: completions answered, a call taken.
    for _ in range(3):
        assert (await rig.complete()).status_code == 200
    assert not _rejected(await rig.call())
    await rig.services.usage.drain()
    accounts, calls = await Account.count(), await TelephonyCall.count()

    await rig.stop_database()
    down = await rig.complete()
    assert down.status_code == 503, down.text
    error = down.json()["error"]
    assert error["code"] == "database_unavailable" and error["type"] == "server_error"
    assert {"message", "param"} <= error.keys() and down.headers["retry-after"] == "5"
    streamed = await rig.complete(stream=True)
    assert streamed.status_code == 503 and "error" in streamed.json()
    models = await rig.api.get("/v1/models", headers=rig.v1)
    assert models.status_code == 503 and models.json()["error"]["type"] == "server_error"
    me = await rig.api.get("/api/me", headers=rig.session)
    assert me.status_code == 503
    assert me.json()["error"] == {"code": "database_unavailable", "field": None,
                                  "message": me.json()["error"]["message"]}
    assert (await rig.api.get("/healthz")).status_code == 503
    with caplog.at_level(logging.WARNING, logger="svc.telephony"):
        assert _rejected(await rig.call())  # refused, never let through
        # The telephone system's question gets the empty answer: hang up.
        asked = await rig.api.get("/api/telephony/pbx/answer", params={
            "from": "+441632960777", "to": "+441632960001"},
            headers={"x-service-telephony-key": SHARED_SECRET})
        assert asked.status_code == 200 and asked.text == ""
    assert caplog.messages.count("call lookup failed") == 2  # both refused lookup_failed

    await rig.start_database()
    assert (await rig.complete()).status_code == 200
    assert (await rig.api.get("/api/me", headers=rig.session)).status_code == 200
    # The call taken before the fault never got its audio: once its ticket is past
    # the 30 seconds, the next admission ends it with a recorded outcome.
    await TelephonyCall.update({TelephonyCall.started_at: dt.datetime.now(dt.UTC)
                                - dt.timedelta(seconds=31)}).where(
        TelephonyCall.outcome == "in_progress")
    assert not _rejected(await rig.call())
    outcomes = sorted(row["outcome"] for row in await TelephonyCall.select(
        TelephonyCall.outcome))
    assert outcomes == ["in_progress", "no_media"]
    await rig.services.usage.drain()
    assert await Account.count() == accounts
    assert await TelephonyCall.count() == calls + 1
    answered = rig.statuses.count(200)
    assert await UsageEvent.count().where(UsageEvent.outcome == "ok") == answered


async def test_under_load_every_answer_is_200_or_503_and_every_200_is_counted(rig):
    """Four clients keep sending while the database stops and starts under them."""
    enough = anyio.Event()
    seen_down, seen_back = anyio.Event(), anyio.Event()

    async def client() -> None:
        while not enough.is_set():
            response = await rig.complete()
            if response.status_code == 503:
                seen_down.set()
            elif seen_down.is_set() and response.status_code == 200:
                seen_back.set()

    async with anyio.create_task_group() as clients:
        for _ in range(4):
            clients.start_soon(client)
        while rig.statuses.count(200) < 8:
            await anyio.sleep(0.05)
        await rig.stop_database()
        await seen_down.wait()
        while rig.statuses.count(503) < 8:
            await anyio.sleep(0.05)
        await rig.start_database()
        await seen_back.wait()
        while rig.statuses[-8:].count(200) < 8:
            await anyio.sleep(0.05)
        enough.set()

    assert set(rig.statuses) <= {200, 503}, sorted(set(rig.statuses))
    await rig.services.usage.drain()
    # Every completion that was answered is accounted for, including those whose
    # usage row met the stopped database and waited for it.
    assert await UsageEvent.count().where(UsageEvent.outcome == "ok") == rig.statuses.count(200)
