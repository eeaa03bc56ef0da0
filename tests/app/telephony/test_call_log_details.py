"""The call log filtered by date range and caller number, and one call with its line's
label, its agent and the timings of each answered turn (spec: telephony.md "Call log")."""

from __future__ import annotations

import datetime as dt

import pytest

from app.tables import TelephonyCall, TelephonyTurn
from tests.app.telephony.deployment import LINE_NUMBER, deployment

pytestmark = pytest.mark.anyio

CALLS = "/api/admin/telephony/calls"


async def _call(setup, caller: str, started: dt.datetime) -> str:
    call = TelephonyCall(number_id=setup.line["id"], e164=LINE_NUMBER, from_number=caller,
                         provider="carrier", outcome="completed", started_at=started,
                         agent_id=setup.agent_id)
    await call.save()
    return str(call.id)


def _day(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


async def test_the_call_log_filters_by_date_range_and_caller(api, services):
    setup = await deployment(api, services)
    early = await _call(setup, "+447700900111", _day("2026-03-01T23:59:00"))
    middle = await _call(setup, "+447700900222", _day("2026-03-02T00:00:00"))
    late = await _call(setup, "+447700900222", _day("2026-03-05T12:00:00"))

    async def ids(**params) -> list[str]:
        page = await api.get(CALLS, headers=setup.manager, params=params)
        assert page.status_code == 200, page.text
        return [call["id"] for call in page.json()["data"]]

    assert await ids(since="2026-03-02") == [late, middle]
    assert await ids(until="2026-03-05") == [middle, early]
    assert await ids(since="2026-03-02", until="2026-03-03") == [middle]
    assert await ids(caller="07700 900-111") == []  # a national form is not the stored one
    assert await ids(caller="+44 7700 900111") == [early]
    assert await ids(caller="900222", since="2026-03-03") == [late]


@pytest.mark.parametrize(("params", "field"), [
    ({"since": "2026-02-30"}, "since"),
    ({"until": "yesterday"}, "until"),
    ({"since": "2026-03-05", "until": "2026-03-05"}, "since"),
    ({"since": "2026-03-06", "until": "2026-03-05"}, "since"),
    ({"caller": "anonymous"}, "caller"),
    ({"caller": "+44%"}, "caller"),
    ({"caller": "1234567890123456"}, "caller"),
])
async def test_a_bad_filter_is_422_and_names_its_parameter(api, services, params, field):
    setup = await deployment(api, services)
    refused = await api.get(CALLS, headers=setup.manager, params=params)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == field and field in error["message"]


async def test_one_call_names_its_line_and_agent_and_times_each_turn_in_seconds(api, services):
    setup = await deployment(api, services)
    await setup.patch_line(label="Front desk")
    call_id = await _call(setup, "+447700900333", _day("2026-03-02T10:00:00"))
    await TelephonyTurn(call_id=call_id, asked_ms=850, first_text_ms=1200,
                        first_audio_ms=1640, finished_ms=4321).save()
    await TelephonyTurn(call_id=call_id, asked_ms=900, first_text_ms=None,
                        first_audio_ms=None, finished_ms=950).save()
    view = (await api.get(f"{CALLS}/{call_id}", headers=setup.manager)).json()
    assert (view["line_label"], view["agent_name"]) == ("Front desk", "Reception")
    assert view["turns"] == [
        {"asked_s": 0.85, "first_text_s": 1.2, "first_audio_s": 1.64, "finished_s": 4.321},
        {"asked_s": 0.9, "first_text_s": None, "first_audio_s": None, "finished_s": 0.95}]
    listed = (await api.get(CALLS, headers=setup.manager)).json()["data"][0]
    assert (listed["line_label"], listed["agent_name"]) == ("Front desk", "Reception")
