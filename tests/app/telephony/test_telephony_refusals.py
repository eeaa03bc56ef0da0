"""Every refusal reason, each by itself (spec: telephony.md "Refusal reasons").

A refused carrier call is answered ``<Reject/>`` and a refused pbx answer with an
empty body; the reason is only in the audit trail, as ``telephony.refused``.
"""

from __future__ import annotations

import datetime as dt

import pytest

from app import db
from app.tables import AuditEntry, TelephonyCall
from tests.app.telephony.deployment import CALLER, LINE_NUMBER, carrier_post, deployment, \
    voice_params
from tests.app.telephony.test_telephony_pbx import FakeAsterisk
from tests.support.settings import store_unchecked

pytestmark = pytest.mark.anyio

VOICE = "/api/telephony/carrier/voice"
REJECT = b"<Response><Reject /></Response>"


async def refusal_reasons() -> list[str]:
    rows = await AuditEntry.select().where(AuditEntry.kind == "telephony.refused").order_by(
        AuditEntry.id).output(load_json=True)
    return [row["data"]["reason"] for row in rows]


async def rejected(api, **overrides) -> bool:
    answered = await carrier_post(api, VOICE, voice_params(**overrides))
    assert answered.status_code == 200, answered.text
    return answered.content.endswith(REJECT)


@pytest.fixture
async def setup(api, services):
    return await deployment(api, services)


async def test_unknown_number(api, setup):
    assert await rejected(api, dialled="+441632960404")
    assert await refusal_reasons() == ["unknown_number"]


async def test_line_disabled_is_turned_away_exactly_like_an_unknown_number(api, setup):
    unknown = await carrier_post(api, VOICE, voice_params(dialled="+441632960404"))
    await setup.patch_line(enabled=False)
    disabled = await carrier_post(api, VOICE, voice_params())
    assert disabled.content == unknown.content and disabled.content.endswith(REJECT)
    assert dict(disabled.headers).keys() == dict(unknown.headers).keys()
    assert await refusal_reasons() == ["unknown_number", "line_disabled"]


async def test_a_line_on_the_other_transport_is_not_there(api, setup):
    await setup.patch_line(provider="pbx")
    assert await rejected(api)
    assert await refusal_reasons() == ["unknown_number"]


async def test_agent_unavailable(api, setup):
    await api.patch(f"/api/agents/{setup.agent_id}", headers=setup.owner,
                    json={"archived": True})
    assert await rejected(api)
    assert await refusal_reasons() == ["agent_unavailable"]


async def test_owner_unavailable(api, setup):
    await api.deactivate(setup.admin, setup.owner_id)
    assert await rejected(api)
    assert await refusal_reasons() == ["owner_unavailable"]


@pytest.mark.parametrize("flag", ["features.voice", "features.voice_live"])
async def test_voice_not_enabled_globally(api, setup, flag):
    await setup.setting(flag, False)
    assert await rejected(api)
    assert await refusal_reasons() == ["voice_not_enabled"]


async def test_voice_not_enabled_for_the_lines_account_only(api, setup):
    await api.put(f"/api/admin/users/{setup.owner_id}/features/features.voice_live",
                  headers=setup.admin, json={"value": False})
    assert await rejected(api)
    await api.delete(f"/api/admin/users/{setup.owner_id}/features/features.voice_live",
                     headers=setup.admin)
    assert not await rejected(api)
    assert await refusal_reasons() == ["voice_not_enabled"]


async def test_an_account_override_can_switch_voice_on_for_one_account(api, setup):
    await setup.setting("features.voice", False)
    await api.put(f"/api/admin/users/{setup.owner_id}/features/features.voice",
                  headers=setup.admin, json={"value": True})
    assert not await rejected(api)


@pytest.mark.parametrize("key, value", [("voice_live.tts_stream", False),
                                        ("voice_live.tts_stream_url", "")])
async def test_no_streaming_synthesiser(api, setup, key, value):
    await setup.setting(key, value)
    assert await rejected(api)
    assert await refusal_reasons() == ["no_streaming_synthesiser"]


async def test_unsupported_rate(api, setup, services):
    # The API refuses any other rate now; one stored before that rule is still refused.
    await store_unchecked(services, "voice_live.stt_sample_rate", 24000)
    assert await rejected(api)
    await setup.setting("voice_live.stt_sample_rate", 8000)
    assert not await rejected(api, call_sid="CA0002")
    assert await refusal_reasons() == ["unsupported_rate"]


async def test_rate_from_the_sixth_ring_in_five_minutes(api, setup):
    await setup.setting("telephony.max_concurrent_calls", 100)
    for ring in range(5):
        assert not await rejected(api, call_sid=f"CA{ring}")
    assert await rejected(api, call_sid="CA5")
    assert not await rejected(api, caller="+441632960778", call_sid="CA6")
    assert await refusal_reasons() == ["rate_from"]


async def test_rate_to_the_sixty_first_call_in_a_minute(api, setup):
    await setup.setting("telephony.max_concurrent_calls", 100)
    await TelephonyCall.insert(*[TelephonyCall(
        number_id=setup.line["id"], e164=LINE_NUMBER, from_number=f"+4411600{n:04d}",
        provider="carrier", outcome="completed") for n in range(60)])
    assert await rejected(api)
    assert await refusal_reasons() == ["rate_to"]


async def test_concurrency_turns_the_call_away_and_logs_it_line_full(api, setup):
    await setup.setting("telephony.max_concurrent_calls", 1)
    assert not await rejected(api, call_sid="CA1")
    assert await rejected(api, caller="+441632960778", call_sid="CA2")
    assert await rejected(api, caller="+441632960778", call_sid="CA2")  # the carrier retried
    assert await refusal_reasons() == ["concurrency", "concurrency"]
    calls = {row["carrier_call_sid"]: row for row in await TelephonyCall.select()}
    assert {sid: row["outcome"] for sid, row in calls.items()} == {
        "CA1": "in_progress", "CA2": "line_full"}
    assert calls["CA2"]["ended_at"] is not None and calls["CA2"]["media_started_at"] is None
    audited = await AuditEntry.select().where(AuditEntry.kind == "telephony.refused").output(
        load_json=True)
    assert {row["data"]["call_id"] for row in audited} == {str(calls["CA2"]["id"])}


async def test_calls_a_full_line_turned_away_do_not_count_as_calls_it_took(api, setup):
    await setup.setting("telephony.max_concurrent_calls", 100)
    await TelephonyCall.insert(*[TelephonyCall(
        number_id=setup.line["id"], e164=LINE_NUMBER, from_number=f"+4411600{n:04d}",
        provider="carrier", outcome="line_full") for n in range(60)])
    assert not await rejected(api)


async def test_a_call_whose_ticket_was_never_presented_frees_its_place(api, setup):
    await setup.setting("telephony.max_concurrent_calls", 1)
    assert not await rejected(api, call_sid="CA1")
    await TelephonyCall.update({
        TelephonyCall.started_at: dt.datetime.now(dt.UTC) - dt.timedelta(seconds=31)},
        force=True)
    assert not await rejected(api, caller="+441632960778", call_sid="CA2")
    outcomes = {row["carrier_call_sid"]: row["outcome"] for row in await TelephonyCall.select()}
    assert outcomes == {"CA1": "no_media", "CA2": "in_progress"}


async def test_lookup_failed_when_the_database_cannot_be_asked(api, services, setup,
                                                               database):
    services.settings.cache_seconds = 3600
    await services.settings.snapshot()  # the signature check still has its credential
    await db.close_pool()
    db.use_database("postgresql://svc@127.0.0.1:1/unreachable")
    try:
        assert await rejected(api)
    finally:
        db.DB.config = {"dsn": database}
        await db.open_pool(max_size=10)
    assert await TelephonyCall.count() == 0


async def test_public_source_and_ticket_unavailable_are_pbx_reasons(api, services,
                                                                    monkeypatch):
    """public_source has its own test with the pbx; here the ticket store fails."""
    setup = await deployment(api, services, provider="pbx", line_provider="pbx")

    async def unreachable(call_id, token):
        raise OSError("the ticket store is unreachable")

    monkeypatch.setattr(services.telephony.tickets, "issue", unreachable)
    answered = await FakeAsterisk(api, services).answer(CALLER, setup.line["e164"])
    assert answered.status_code == 200 and answered.text == ""
    assert await refusal_reasons() == ["ticket_unavailable"]
