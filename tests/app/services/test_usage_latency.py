"""Usage latency is the caller's whole wait for every kind of use — the app's chat and
``/v1`` from the request's arrival, a telephone turn from the end of the caller's
speech — and usage is totalled per line."""

from __future__ import annotations

import datetime as dt
import time
import uuid

import pytest

from app.services.access import reach_of_account
from app.services.usage import UsageRecord
from app.tables import TelephonyLine, UsageEvent
from app.services.call_context import CallContext
from core.pipeline import CallToolPolicy
from tests.app.services.test_pipeline import add_account, add_agent, turn

pytestmark = pytest.mark.anyio

#: How long before the pipeline the question is made to have been asked.
WAITED = 5.0


def _arrived_earlier(request) -> float:
    return time.monotonic() - WAITED


async def _only_usage(services) -> dict:
    await services.usage.drain()
    [row] = await UsageEvent.select()
    return row


async def test_a_turn_counts_from_when_it_was_asked_not_from_its_model_call(services):
    owner = await add_account(services)
    agent = await add_agent(owner, model="local")
    await turn(services, owner, agent, "Hello", asked_at=time.monotonic() - WAITED)
    row = await _only_usage(services)
    # The built-in model answers at once: timing only its step would say 0 ms.
    assert row["latency_ms"] >= WAITED * 1000 and row["line_id"] is None


async def test_a_telephone_turn_counts_from_the_callers_speech_and_names_its_line(services):
    owner = await add_account(services)
    agent = await add_agent(owner, model="local")
    line_id = uuid.uuid4()
    context = CallContext(uuid.uuid4(), line_id, owner, "+447700900123")
    await turn(services, owner, agent, "Hello", source="telephone", policy=CallToolPolicy(),
               call=context, asked_at=time.monotonic() - WAITED)
    row = await _only_usage(services)
    assert row["source"] == "telephone" and row["line_id"] == line_id
    assert row["latency_ms"] >= WAITED * 1000


async def test_the_apps_chat_counts_from_the_requests_arrival(api, services, monkeypatch):
    from app.routes import chats

    monkeypatch.setattr(chats, "arrived_at", _arrived_earlier)
    user = await api.as_new_user(services, "ann@example.org")
    agent = (await api.post("/api/agents", headers=user,
                            json={"name": "Desk", "model": "local"})).json()
    chat = (await api.post("/api/chats", headers=user, json={"agent_id": agent["id"]})).json()
    sent = await api.post(f"/api/chats/{chat['id']}/messages", headers=user,
                          json={"content": "Hello"})
    assert sent.status_code == 200, sent.text
    row = await _only_usage(services)
    assert row["source"] == "app" and row["latency_ms"] >= WAITED * 1000


async def test_the_v1_api_counts_from_the_requests_arrival(api, services, monkeypatch):
    from app.public_api import agent_calls

    monkeypatch.setattr(agent_calls, "arrived_at", _arrived_earlier)
    user = await api.as_new_user(services, "dev@example.org")
    key = (await api.post("/api/profile/api-keys", headers=user,
                          json={"name": "laptop"})).json()["key"]
    answered = await api.post("/v1/chat/completions", headers={"Authorization": f"Bearer {key}"},
                              json={"model": "local",
                                    "messages": [{"role": "user", "content": "Hello"}]})
    assert answered.status_code == 200, answered.text
    row = await _only_usage(services)
    assert row["source"] == "api" and row["latency_ms"] >= WAITED * 1000


async def test_usage_is_totalled_per_line_with_its_number_and_label(api, services):
    admin = await api.as_new_user(services, "root@example.org", role="admin")
    owner = await add_account(services, "shop@example.org")
    agent = await add_agent(owner, model="local")
    line = TelephonyLine(e164="+441632960001", label="Front desk", agent_id=agent,
                         owner_user_id=owner)
    await line.save()
    for line_id, latency in ((line.id, 900), (line.id, 1100), (None, 40)):
        services.usage.record(UsageRecord(
            owner, "local", "local", "telephone" if line_id else "app", "ok",
            prompt_tokens=3, completion_tokens=4, latency_ms=latency, line_id=line_id))
    await services.usage.drain()
    totals = (await api.get("/api/admin/usage", headers=admin)).json()
    by_line = {row["bucket"]: row for row in totals["by_line"]}
    ours = by_line[str(line.id)]
    assert (ours["requests"], ours["avg_latency_ms"], ours["line_e164"], ours["line_label"]) == (
        2, 1000, "+441632960001", "Front desk")
    assert by_line[None]["requests"] == 1 and by_line[None]["line_e164"] is None


@pytest.mark.parametrize(("params", "field"), [
    ({"since": "2026-02-30"}, "since"), ({"until": "soon"}, "until"),
    ({"since": "2026-03-02", "until": "2026-03-01"}, "since"),
    ({"since": "2024-01-01", "until": "2026-01-01"}, "since")])
async def test_a_bad_usage_range_is_422_and_names_its_parameter(api, services, params, field):
    admin = await api.as_new_user(services, "root@example.org", role="admin")
    refused = await api.get("/api/admin/usage", headers=admin, params=params)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["field"] == field


async def test_the_usage_range_is_honoured(api, services):
    admin = await api.as_new_user(services, "root@example.org", role="admin")
    owner = await add_account(services, "shop@example.org")
    services.usage.record(UsageRecord(owner, "local", "local", "app", "ok"))
    await services.usage.drain()
    today = (await UsageEvent.select(UsageEvent.at).first())["at"].astimezone(dt.UTC).date()
    inside = (await api.get("/api/admin/usage", headers=admin, params={
        "since": today.isoformat(), "until": (today + dt.timedelta(days=1)).isoformat()})).json()
    before = (await api.get("/api/admin/usage", headers=admin, params={
        "since": (today - dt.timedelta(days=30)).isoformat(), "until": today.isoformat()})).json()
    assert [row["requests"] for row in inside["by_source"]] == [1]
    assert before["by_source"] == [] and before["until"] == today.isoformat()
