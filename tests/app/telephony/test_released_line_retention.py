"""The calls of a released line are still swept by the line's retention periods.

spec: telephony.md "Line" — a released line is "removed for good; its calls stay in
the log"; "Retention periods" — the periods remove what they name. Calls are taken
through the carrier's webhooks, the line is released through the API, and the daily
sweep then removes what the line's periods say, as it would have before the release.
"""

from __future__ import annotations

import datetime as dt

import pytest

from app.tables import TelephonyCall
from tests.app.telephony.deployment import carrier_post, deployment, voice_params

pytestmark = pytest.mark.anyio

VOICE = "/api/telephony/carrier/voice"
STATUS = "/api/telephony/carrier/status"


async def _a_finished_call(api, call_sid: str, caller: str, days_ago: int) -> None:
    taken = await carrier_post(api, VOICE, voice_params(caller=caller, call_sid=call_sid))
    assert b"<Connect" in taken.content, taken.text
    await carrier_post(api, STATUS, {"CallSid": call_sid, "CallStatus": "completed"})
    await TelephonyCall.update({
        TelephonyCall.started_at: dt.datetime.now(dt.UTC) - dt.timedelta(days=days_ago),
        TelephonyCall.chat_id: None}).where(TelephonyCall.carrier_call_sid == call_sid)


async def test_calls_of_a_released_line_are_swept_by_its_periods(api, services):
    setup = await deployment(api, services)
    await setup.setting("telephony.max_concurrent_calls", 10)
    await _a_finished_call(api, "CA-OLD", "+447700900301", days_ago=70)
    await _a_finished_call(api, "CA-MID", "+447700900302", days_ago=40)
    await _a_finished_call(api, "CA-NEW", "+447700900303", days_ago=5)
    # The periods in force when the line goes are those its calls are swept by.
    await setup.patch_line(log_days=60, transcript_days=30)
    released = await api.delete(f"/api/admin/telephony/numbers/{setup.line['id']}",
                                headers=setup.manager)
    assert released.status_code == 204, released.text

    counts = await services.retention.sweep(dt.datetime.now(dt.UTC))

    assert counts["telephony"]["calls"] == 1
    left = {row["carrier_call_sid"]: row for row in await TelephonyCall.select()}
    assert set(left) == {"CA-MID", "CA-NEW"}
    assert left["CA-MID"]["tidied_at"] is not None
    assert left["CA-NEW"]["tidied_at"] is None


async def test_a_call_keeps_the_periods_its_line_had_when_it_started(api, services):
    setup = await deployment(api, services)
    await setup.patch_line(log_days=60, transcript_days=30, recording_days=7)
    await _a_finished_call(api, "CA-KEPT", "+447700900311", days_ago=1)
    call = await TelephonyCall.select().where(
        TelephonyCall.carrier_call_sid == "CA-KEPT").first()
    assert (call["log_days"], call["transcript_days"], call["recording_days"]) == (60, 30, 7)
