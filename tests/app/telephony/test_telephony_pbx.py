"""The telephone system's questions, asked the way an Asterisk dialplan asks them:
``CURL()`` of answer with the secret header, the AudioSocket connection presenting the
identifier, then ``CURL()`` of continue."""

from __future__ import annotations

import datetime as dt
import uuid

import httpx
import pytest

from app.main import create_app
from app.tables import AuditEntry, TelephonyCall, TelephonyTicket
from core.tickets import Ticket, present_ticket
from tests.app.telephony.deployment import CALLER, LINE_NUMBER, SHARED_SECRET, deployment

pytestmark = pytest.mark.anyio


class FakeAsterisk:
    """The dialplan's side: answer → AudioSocket → continue.

    The AudioSocket step does what the listener does with the 16-byte identifier of
    an AudioSocket ``0x01`` message: turn it into UUID text and redeem it.
    """

    def __init__(self, client: httpx.AsyncClient, services, secret: str = SHARED_SECRET):
        self.client = client
        self.services = services
        self.headers = {"x-service-telephony-key": secret}

    async def answer(self, caller: str, dialled: str) -> httpx.Response:
        return await self.client.get("/api/telephony/pbx/answer", headers=self.headers,
                                     params={"from": caller, "to": dialled})

    async def audiosocket(self, identifier: str):
        presented = uuid.UUID(identifier).bytes  # what goes over the wire
        return await self.services.telephony.redeem(str(uuid.UUID(bytes=presented)))

    async def proceed(self, identifier: str) -> httpx.Response:
        return await self.client.get("/api/telephony/pbx/continue", headers=self.headers,
                                     params={"call": identifier})


async def test_answer_connect_continue_ends_in_a_hangup_without_a_transfer(api, services):
    await deployment(api, services, provider="pbx", line_provider="pbx")
    asterisk = FakeAsterisk(api, services)
    answered = await asterisk.answer(CALLER, "0044 1632 960001")
    assert answered.status_code == 200
    assert answered.headers["content-type"].startswith("text/plain")
    identifier = answered.text
    assert str(uuid.UUID(identifier)) == identifier
    call = await asterisk.audiosocket(identifier)
    assert call is not None and call.e164 == LINE_NUMBER and call.provider == "pbx"
    assert call.from_number == CALLER
    after = await asterisk.proceed(identifier)
    assert after.status_code == 200 and after.text == ""


async def test_continue_gives_the_transfer_number_once_a_transfer_was_approved(api, services):
    await deployment(api, services, provider="pbx", line_provider="pbx")
    asterisk = FakeAsterisk(api, services)
    identifier = (await asterisk.answer(CALLER, LINE_NUMBER)).text
    call = await asterisk.audiosocket(identifier)
    await TelephonyCall.update({TelephonyCall.transfer_approved: True}).where(
        TelephonyCall.id == call.call_id)
    assert (await asterisk.proceed(identifier)).text == "+441632960999"
    assert (await TelephonyCall.select().first())["outcome"] == "transferred"
    assert (await asterisk.proceed(str(uuid.uuid4()))).text == ""


async def test_a_wrong_or_missing_secret_is_refused_with_an_empty_body(api, services):
    await deployment(api, services, provider="pbx", line_provider="pbx")
    for secret in ("not-the-secret", ""):
        refused = await FakeAsterisk(api, services, secret).answer(CALLER, LINE_NUMBER)
        assert refused.status_code == 403 and refused.text == ""
    bare = await api.get("/api/telephony/pbx/answer", params={"from": CALLER,
                                                              "to": LINE_NUMBER})
    assert bare.status_code == 403 and bare.text == ""
    assert await TelephonyCall.count() == 0
    # Audited, counted: a stranger guessing the secret grows one entry's count.
    rows = await AuditEntry.select().where(
        AuditEntry.kind == "telephony.refused").output(load_json=True)
    assert [(row["data"]["reason"], row["occurrences"]) for row in rows] == [("bad_key", 3)]


async def test_a_public_source_is_refused_even_with_the_secret_and_audited(api, services):
    await deployment(api, services, provider="pbx", line_provider="pbx")
    app = create_app(services, own_pool=False, scheduled_jobs=False)
    await app.start()
    transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 5060))
    async with httpx.AsyncClient(transport=transport, base_url="http://svc") as outside:
        refused = await FakeAsterisk(outside, services).answer(CALLER, LINE_NUMBER)
        assert refused.status_code == 403 and refused.text == ""
        for _ in range(5):
            later = await FakeAsterisk(outside, services).proceed(str(uuid.uuid4()))
            assert later.status_code == 403
    rows = await AuditEntry.select().where(
        AuditEntry.kind == "telephony.refused").output(load_json=True)
    # One counted entry per source and reason, however often the source asks.
    assert [(row["data"]["reason"], row["data"]["address"], row["occurrences"])
            for row in rows] == [("public_source", "203.0.113.9", 6)]
    assert await TelephonyCall.count() == 0


async def test_the_pbx_paths_are_absent_until_switched_on(api, services):
    setup = await deployment(api, services, provider="pbx", line_provider="pbx",
                             switched_on=False)
    asterisk = FakeAsterisk(api, services)
    assert (await asterisk.answer(CALLER, LINE_NUMBER)).status_code == 404
    assert (await asterisk.proceed(str(uuid.uuid4()))).status_code == 404
    await setup.setting("features.telephony", True)
    assert (await asterisk.answer(CALLER, LINE_NUMBER)).status_code == 200


# -- the ticket: 30 seconds, once (spec: telephony.md "Pbx ticket")

async def test_an_identifier_is_redeemed_exactly_once(api, services):
    await deployment(api, services, provider="pbx", line_provider="pbx")
    identifier = (await FakeAsterisk(api, services).answer(CALLER, LINE_NUMBER)).text
    assert await services.telephony.redeem(identifier) is not None
    assert await services.telephony.redeem(identifier) is None
    assert await services.telephony.redeem(str(uuid.uuid4())) is None
    assert await services.telephony.redeem("") is None


async def test_an_identifier_older_than_thirty_seconds_is_rejected(api, services):
    await deployment(api, services, provider="pbx", line_provider="pbx")
    identifier = (await FakeAsterisk(api, services).answer(CALLER, LINE_NUMBER)).text
    await TelephonyTicket.update({
        TelephonyTicket.issued_at: dt.datetime.now(dt.UTC) - dt.timedelta(seconds=31)}).where(
        TelephonyTicket.token == identifier)
    assert await services.telephony.redeem(identifier) is None


async def test_the_database_and_the_core_lifecycle_agree(api, services):
    """Redemption in SQL gives what ``core.tickets.present_ticket`` decides."""
    setup = await deployment(api, services, provider="pbx", line_provider="pbx")
    await setup.setting("telephony.max_concurrent_calls", 10)
    for age, first_use in ((0, True), (29, True), (31, True), (0, False)):
        identifier = (await FakeAsterisk(api, services).answer(
            f"+4416329{age:02d}{int(first_use)}111", LINE_NUMBER)).text
        issued = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=age)
        await TelephonyTicket.update({TelephonyTicket.issued_at: issued}).where(
            TelephonyTicket.token == identifier)
        record = Ticket(identifier, issued.timestamp())
        if not first_use:
            await services.telephony.redeem(identifier)
            record = Ticket(identifier, issued.timestamp(), issued.timestamp())
        decided = present_ticket(record, dt.datetime.now(dt.UTC).timestamp())
        redeemed = await services.telephony.redeem(identifier)
        assert (redeemed is not None) == decided.admitted, (age, first_use)
