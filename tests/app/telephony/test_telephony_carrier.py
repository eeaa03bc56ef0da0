"""The carrier webhooks against the carrier's own library: signatures made by
``twilio.request_validator`` and answers compared with ``twilio.twiml``."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import anyio
import httpx
import pytest
from twilio.twiml.voice_response import Connect, Stream, VoiceResponse

from app.services.audit import TALLY_SOURCES_PER_WINDOW
from app.tables import AuditEntry, TelephonyCall, TelephonySignatureFailure, TelephonyTicket
from tests.app.telephony.deployment import (
    CALLER,
    LINE_NUMBER,
    PUBLIC,
    carrier_post,
    deployment,
    signature,
    voice_params,
)

pytestmark = pytest.mark.anyio

VOICE = "/api/telephony/carrier/voice"
STATUS = "/api/telephony/carrier/status"
CONTINUE = "/api/telephony/carrier/continue"


def tree(document: str | bytes) -> tuple:
    """An XML document as nested (tag, attributes, text, children), for comparing
    meaning rather than bytes."""
    def walk(element: ET.Element) -> tuple:
        return (element.tag, dict(element.attrib), (element.text or "").strip(),
                tuple(walk(child) for child in element))
    return walk(ET.fromstring(document))


def connect_twiml(ticket: str) -> str:
    response = VoiceResponse()
    connect = Connect(action=f"{PUBLIC}{CONTINUE}")
    stream = Stream(url="wss://calls.example.org/api/telephony/carrier/media")
    stream.parameter(name="ticket", value=ticket)
    connect.append(stream)
    response.append(connect)
    return str(response)


def ticket_of(document: bytes) -> str:
    return ET.fromstring(document).find("./Connect/Stream/Parameter").attrib["value"]


async def test_a_signed_call_is_answered_with_a_stream_and_recorded(api, services):
    await deployment(api, services)
    answered = await carrier_post(api, VOICE, voice_params())
    assert answered.status_code == 200, answered.text
    assert answered.headers["content-type"].startswith("text/xml")
    ticket = ticket_of(answered.content)
    assert tree(answered.content) == tree(connect_twiml(ticket))
    call = await TelephonyCall.select().first()
    assert call["outcome"] == "in_progress" and call["carrier_call_sid"] == "CA0001"
    assert call["from_number"] == CALLER and call["e164"] == LINE_NUMBER
    assert call["number_id"] is not None and call["provider"] == "carrier"
    stored = await TelephonyTicket.select().first()
    assert stored["token"] == ticket and stored["call_id"] == call["id"]


async def test_the_carriers_own_header_name_is_accepted(api, services):
    await deployment(api, services)
    answered = await carrier_post(api, VOICE, voice_params(), header="X-Twilio-Signature")
    assert ET.fromstring(answered.content).find("./Connect") is not None


@pytest.mark.parametrize("how", ["one byte of the signature", "one byte of the body",
                                 "trailing slash", "http", "other credential", "no header",
                                 "a NUL in the query"])
async def test_a_signature_that_does_not_match_is_refused_and_audited(api, services, how):
    await deployment(api, services)
    params = voice_params()
    good = signature(PUBLIC + VOICE, params)
    headers = {"X-Carrier-Signature": good}
    if how == "one byte of the signature":
        headers["X-Carrier-Signature"] = ("B" if good[0] != "B" else "C") + good[1:]
    elif how == "one byte of the body":
        params = {**params, "From": CALLER[:-1] + "8"}
    elif how == "trailing slash":
        headers["X-Carrier-Signature"] = signature(PUBLIC + VOICE + "/", params)
    elif how == "http":
        headers["X-Carrier-Signature"] = signature(PUBLIC.replace("https", "http") + VOICE,
                                                   params)
    elif how == "other credential":
        headers["X-Carrier-Signature"] = signature(PUBLIC + VOICE, params, "other-token")
    elif how == "no header":
        headers = {}
    # A query the API would refuse with 422 is, on a webhook, judged by the signature.
    query = "?q=%00" if how == "a NUL in the query" else ""
    refused = await api.post(VOICE + query, data=params, headers=headers)
    assert refused.status_code == 403
    assert await TelephonyCall.count() == 0
    audited = await AuditEntry.select().where(AuditEntry.kind == "telephony.signature.rejected")
    assert len(audited) == 1 and audited[0]["subject"] == VOICE


async def test_the_default_port_in_the_signed_url_is_accepted(api, services):
    await deployment(api, services)
    answered = await carrier_post(api, VOICE, voice_params(),
                                  url="https://calls.example.org:443" + VOICE)
    assert answered.status_code == 200


async def test_a_locked_out_address_cannot_shut_out_a_correctly_signed_request(
        api, services):
    """Thirty failures a minute lock the address out of being checked for free: an
    unsigned or wrongly signed request is refused 429 without a write. A request whose
    signature holds is still checked and taken — whoever shares the carrier's address
    (or makes it look shared) cannot stop its calls."""
    await deployment(api, services)
    await TelephonySignatureFailure.insert(
        *[TelephonySignatureFailure(address="127.0.0.1") for _ in range(30)])
    answered = await carrier_post(api, VOICE, voice_params())  # correctly signed
    assert answered.status_code == 200 and ET.fromstring(answered.content).find(
        "./Connect") is not None
    unsigned = await api.post(VOICE, data=voice_params())
    wrong = await carrier_post(api, VOICE, voice_params(call_sid="CA0002"),
                               credential="other-token")
    assert unsigned.status_code == wrong.status_code == 429
    assert await TelephonyCall.count() == 1
    assert await TelephonySignatureFailure.count() == 30
    assert await AuditEntry.count().where(
        AuditEntry.kind == "telephony.signature.rejected") == 0


async def test_repeated_signature_failures_from_one_address_are_one_counted_entry(
        api, services):
    await deployment(api, services)
    for _ in range(12):
        refused = await carrier_post(api, VOICE, voice_params(), credential="other-token")
        assert refused.status_code == 403
    await api.post(VOICE, data=voice_params())  # unsigned: the same address's count
    audited = await AuditEntry.select().where(
        AuditEntry.kind == "telephony.signature.rejected").output(load_json=True)
    assert len(audited) == 1
    assert audited[0]["occurrences"] == 13 and audited[0]["data"] == {"address": "127.0.0.1"}
    admin = await api.as_new_user(services, "audit@example.org", role="admin")
    listed = (await api.get("/api/admin/audit?kind=telephony.signature.rejected",
                            headers=admin)).json()["data"]
    assert [entry["occurrences"] for entry in listed] == [13]


async def test_unsigned_requests_from_ever_new_addresses_cannot_grow_the_audit_trail(
        api, services):
    # A stranger with many addresses (an IPv6 network has more than anyone can use)
    # sends each unsigned request from one not seen before. Each address is its own
    # counted entry up to a bound per window; past it they all count in one.
    await deployment(api, services)
    addresses = [f"127.0.0.{n}" for n in range(2, 2 + TALLY_SOURCES_PER_WINDOW + 40)]
    for address in addresses:
        transport = httpx.AsyncHTTPTransport(local_address=address)
        async with httpx.AsyncClient(transport=transport, base_url=api.base_url) as stranger:
            refused = await stranger.post(VOICE, data=voice_params())
            assert refused.status_code == 403
    audited = await AuditEntry.select().where(
        AuditEntry.kind == "telephony.signature.rejected").output(load_json=True)
    assert len(audited) == TALLY_SOURCES_PER_WINDOW + 1
    assert sum(entry["occurrences"] for entry in audited) == len(addresses)
    *each, many = sorted(audited, key=lambda entry: entry["id"])
    assert [entry["data"]["address"] for entry in each] == addresses[:len(each)]
    assert many["data"] == {"address": "many addresses"} and many["occurrences"] == 40
    # The carrier's own signed requests are still taken.
    assert (await carrier_post(api, VOICE, voice_params())).status_code == 200


async def test_a_webhook_body_over_16_kib_is_refused(api, services):
    await deployment(api, services)
    params = {**voice_params(), "Padding": "x" * (16 * 1024)}
    refused = await carrier_post(api, VOICE, params)
    assert refused.status_code == 413


async def test_the_carrier_paths_are_absent_until_switched_on_and_named(api, services):
    setup = await deployment(api, services, provider=None)
    for path in (VOICE, STATUS, CONTINUE):
        assert (await carrier_post(api, path, voice_params())).status_code == 404
    await api.put("/api/admin/telephony", headers=setup.admin, json={"provider": "carrier"})
    assert (await carrier_post(api, VOICE, voice_params())).status_code == 200
    await setup.setting("features.telephony", False)  # a runtime value wins, no restart
    assert (await carrier_post(api, VOICE, voice_params())).status_code == 404


async def test_a_status_callback_before_media_ends_the_call_as_carrier_ended(api, services):
    await deployment(api, services)
    await carrier_post(api, VOICE, voice_params())
    ringing = await carrier_post(api, STATUS, {"CallSid": "CA0001", "CallStatus": "in-progress"})
    assert tree(ringing.content) == tree(str(VoiceResponse()))
    assert (await TelephonyCall.select().first())["carrier_status"] == "in-progress"
    await carrier_post(api, STATUS, {"CallSid": "CA0001", "CallStatus": "canceled"})
    call = await TelephonyCall.select().first()
    assert call["outcome"] == "carrier_ended" and call["ended_at"] is not None


async def test_a_status_callback_after_media_completes_the_call_once(api, services):
    await deployment(api, services)
    answered = await carrier_post(api, VOICE, voice_params())
    assert await services.telephony.redeem(ticket_of(answered.content)) is not None
    await carrier_post(api, STATUS, {"CallSid": "CA0001", "CallStatus": "completed"})
    await carrier_post(api, STATUS, {"CallSid": "CA0001", "CallStatus": "failed"})
    assert (await TelephonyCall.select().first())["outcome"] == "completed"


async def test_continue_hangs_up_unless_a_transfer_passed_the_screening_gate(api, services):
    await deployment(api, services)
    await carrier_post(api, VOICE, voice_params())
    hung_up = await carrier_post(api, CONTINUE, {"CallSid": "CA0001"})
    expected = VoiceResponse()
    expected.hangup()
    assert tree(hung_up.content) == tree(str(expected))
    await TelephonyCall.update({TelephonyCall.transfer_approved: True}, force=True)
    dialled = await carrier_post(api, CONTINUE, {"CallSid": "CA0001"})
    expected = VoiceResponse()
    expected.dial("+441632960999")
    assert tree(dialled.content) == tree(str(expected))
    assert (await TelephonyCall.select().first())["outcome"] == "transferred"


async def replays() -> list[dict]:
    return await AuditEntry.select().where(AuditEntry.kind == "telephony.replayed").output(
        load_json=True)


async def test_a_carrier_retrying_the_same_call_gets_the_same_call_and_ticket(api, services):
    """No second ticket: a retry before the audio started gets the one the call has."""
    await deployment(api, services)
    first = await carrier_post(api, VOICE, voice_params())
    again = await carrier_post(api, VOICE, voice_params())
    assert ticket_of(first.content) == ticket_of(again.content)
    assert await TelephonyCall.count() == 1 and await TelephonyTicket.count() == 1
    audited = await replays()
    assert len(audited) == 1 and audited[0]["data"]["answered"] is True


async def test_a_replayed_voice_webhook_cannot_join_a_call_whose_audio_started(
        api, services):
    await deployment(api, services)
    first = await carrier_post(api, VOICE, voice_params())
    assert await services.telephony.redeem(ticket_of(first.content)) is not None
    reject = VoiceResponse()
    reject.reject()
    for _ in range(3):  # the same signed request, replayed during the call
        replayed = await carrier_post(api, VOICE, voice_params())
        assert replayed.status_code == 200
        assert tree(replayed.content) == tree(str(reject))
    assert await TelephonyTicket.count() == 1
    audited = await replays()
    call = await TelephonyCall.select().first()
    assert len(audited) == 1 and audited[0]["occurrences"] == 3
    assert audited[0]["subject"] == str(call["id"]) and audited[0]["data"]["answered"] is False
    assert call["outcome"] == "in_progress"


async def test_a_call_whose_audio_started_takes_no_second_stream_whatever_the_ticket(
        api, services):
    """However a second ticket came to exist, the call has one audio stream."""
    await deployment(api, services)
    first = await carrier_post(api, VOICE, voice_params())
    call_id = (await TelephonyCall.select().first())["id"]
    tickets = services.telephony.tickets
    second = await tickets.issue(call_id, "second-ticket-of-the-call")
    assert await services.telephony.redeem(ticket_of(first.content)) is not None
    assert await services.telephony.redeem(second) is None


async def test_two_tickets_presented_at_once_admit_one_stream(api, services):
    """Each redemption on its own connection, as on two server processes."""
    await deployment(api, services)
    first = await carrier_post(api, VOICE, voice_params())
    call_id = (await TelephonyCall.select().first())["id"]
    tokens = [ticket_of(first.content),
              await services.telephony.tickets.issue(call_id, "another-ticket-of-the-call")]
    won = []

    async def present(token: str) -> None:
        won.append(await services.telephony.redeem(token))

    async with anyio.create_task_group() as group:
        for token in tokens:
            group.start_soon(present, token)
    assert sum(found is not None for found in won) == 1
