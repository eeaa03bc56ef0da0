"""A call whose process is gone, once the leases end it ``dropped``, is a call like any
other: it frees its place under ``telephony.max_concurrent_calls``, and the daily sweep
removes it by its line's periods (``app.telephony.leases``, ``app.retention``).

The killed process and the database away are run for real in
tests/app/serving/test_calls_left_running.py; here the owner is simply one that holds
no lease.
"""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from app.tables import TelephonyCall
from tests.app.telephony.deployment import carrier_post, deployment, voice_params
from tests.app.telephony.test_call_announcements import VOICE, Line

pytestmark = pytest.mark.anyio


async def test_a_dropped_call_frees_its_place_and_is_swept(api, services):
    setup = await deployment(api, services)
    await setup.setting("telephony.max_concurrent_calls", 1)
    await setup.patch_line(log_days=30)
    line = Line(api, services, setup)
    call_id = await line.call("CA1", "+447700900601")
    full = await carrier_post(api, VOICE, voice_params(caller="+447700900602",
                                                       call_sid="CA2"))
    assert b"<Reject" in full.content  # the running call holds the only place

    await TelephonyCall.update({
        TelephonyCall.owner_instance: uuid.uuid4(),  # a process that is gone
        TelephonyCall.started_at: dt.datetime.now(dt.UTC) - dt.timedelta(days=40),
    }).where(TelephonyCall.id == call_id)
    assert await services.telephony.leases.end_orphans() == [call_id]
    taken = await carrier_post(api, VOICE, voice_params(caller="+447700900603",
                                                        call_sid="CA3"))
    assert b"<Connect" in taken.content, taken.text

    await services.retention.sweep(dt.datetime.now(dt.UTC))
    assert not await TelephonyCall.exists().where(TelephonyCall.id == call_id)
