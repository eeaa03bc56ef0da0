"""The concurrent-call cap holds across server processes sharing one database.

Two application instances, each with its own services (as two ``svc serve``
processes have), serve on two loopback ports over the same PostgreSQL; fifty carrier
calls arrive at once, spread over both. Exactly the cap is taken.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import anyio
import pytest

from app.bundle import Services
from app.tables import AuditEntry, TelephonyCall
from tests.app.telephony.deployment import carrier_post, deployment, voice_params
from tests.support.http import running_app

pytestmark = pytest.mark.anyio

CALLS, CAP = 50, 3


async def test_fifty_simultaneous_calls_over_two_servers_take_exactly_the_cap(
        api, services, boot):
    setup = await deployment(api, services)
    await setup.setting("telephony.max_concurrent_calls", CAP)
    second = Services.build(boot)
    second.settings.cache_seconds = 0
    answers: list[bytes] = []

    async def ring(client, index: int) -> None:
        params = voice_params(caller=f"+4420794600{index:02d}", call_sid=f"CA{index:04d}")
        response = await carrier_post(client, "/api/telephony/carrier/voice", params)
        assert response.status_code == 200, response.text
        answers.append(response.content)

    async with running_app(second) as other:
        async with anyio.create_task_group() as calls:
            for index in range(CALLS):
                calls.start_soon(ring, (api, other)[index % 2], index)
    taken = [a for a in answers if ET.fromstring(a).find("./Connect") is not None]
    assert len(answers) == CALLS and len(taken) == CAP
    assert await TelephonyCall.count().where(TelephonyCall.outcome == "in_progress") == CAP
    refused = await AuditEntry.count().where(AuditEntry.kind == "telephony.refused")
    assert refused == CALLS - CAP
    assert await TelephonyCall.count().where(TelephonyCall.outcome == "line_full") == refused
