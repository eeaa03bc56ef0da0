"""Withheld numbers are not one caller (docs/decisions.md "Withheld numbers").

Every caller who withholds their number arrives with the same text (``anonymous``,
nothing at all, or a carrier's marker number such as ``+266696687``). The per-number
limit ``rate_from`` does not count them: one would otherwise use up the five rings of
every withheld caller of the deployment. They stay bounded by the line's own rate
(``rate_to``) and the concurrent-call cap.
"""

from __future__ import annotations

import pytest

from app.tables import TelephonyCall, TelephonyRing
from app.telephony.voice import callers_number
from tests.app.telephony.deployment import LINE_NUMBER, deployment
from tests.app.telephony.test_telephony_refusals import refusal_reasons, rejected

pytestmark = pytest.mark.anyio

WITHHELD = ("anonymous", "", "+266696687", "Restricted")


@pytest.fixture
async def setup(api, services):
    found = await deployment(api, services)
    await found.setting("telephony.max_concurrent_calls", 100)
    return found


async def test_withheld_callers_do_not_share_the_five_rings(api, setup):
    for ring in range(6 * len(WITHHELD)):  # six rings of each
        assert not await rejected(api, caller=WITHHELD[ring % len(WITHHELD)],
                                  call_sid=f"CA{ring}")
    assert await refusal_reasons() == []
    assert await TelephonyRing.count() == 0  # nothing counted under a withheld "number"
    # A caller with a number is still held to five.
    for ring in range(5):
        assert not await rejected(api, caller="+447700900401", call_sid=f"CB{ring}")
    assert await rejected(api, caller="+447700900401", call_sid="CB5")
    assert await refusal_reasons() == ["rate_from"]


async def test_withheld_callers_are_bounded_by_the_lines_rate(api, setup):
    await TelephonyCall.insert(*[TelephonyCall(
        number_id=setup.line["id"], e164=LINE_NUMBER, from_number="anonymous",
        provider="carrier", outcome="completed") for _ in range(60)])
    assert await rejected(api, caller="anonymous", call_sid="CA-61")
    assert await refusal_reasons() == ["rate_to"]


async def test_withheld_callers_are_bounded_by_the_cap(api, setup):
    await setup.setting("telephony.max_concurrent_calls", 1)
    assert not await rejected(api, caller="anonymous", call_sid="CA1")
    assert await rejected(api, caller="anonymous", call_sid="CA2")
    assert await refusal_reasons() == ["concurrency"]


@pytest.mark.parametrize("reported, number", [
    ("+447700900401", "+447700900401"), ("+266696687", ""), ("anonymous", ""), ("201", "")])
def test_the_agent_is_given_no_number_for_a_withheld_caller(reported, number):
    assert callers_number(reported) == number
