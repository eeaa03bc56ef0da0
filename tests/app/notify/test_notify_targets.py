"""Notification targets at /api/notify-targets: the url sealed and reduced to its host,
the events filter, owner or administrator (anyone else 404), the egress gate at save
and at the live test, and the test send itself against a loopback receiver."""

from __future__ import annotations

import time
import uuid

import pytest

from app.bundle import Services
from app.config import BootConfig
from app.notify.targets import TEST_PACE
from core.notifications import SIGNATURE_HEADER, verify_signature
from tests.support.http import running_app
from tests.support.listener import SilentListener, free_port
from tests.support.receiver import Receiver
from tests.support.settings import allow_loopback, set_runtime

pytestmark = pytest.mark.anyio

SECRET_URL = "https://hooks.example.com/services/T000/B000/very-secret-token"
EVENTS = ["message_taken", "appointment_booked", "appointment_moved", "appointment_cancelled"]


async def _create(api, headers, **fields):
    response = await api.post("/api/notify-targets", headers=headers,
                              json={"kind": "chat_a", "url": SECRET_URL, **fields})
    assert response.status_code == 201, response.text
    return response.json()


async def test_a_saved_target_shows_its_host_and_never_its_url(api, owner):
    created = await _create(api, owner, label="Front desk")
    assert created["host"] == "hooks.example.com" and created["kind"] == "chat_a"
    assert created["events"] == EVENTS and created["enabled"] is True
    assert created["signed"] is False and "signing_secret" not in created
    listed = (await api.get("/api/notify-targets", headers=owner)).json()["data"]
    assert [target["id"] for target in listed] == [created["id"]]
    changed = await api.patch(f"/api/notify-targets/{created['id']}", headers=owner,
                              json={"events": ["message_taken"], "enabled": False,
                                    "url": SECRET_URL + "-2"})
    assert changed.status_code == 200
    assert changed.json()["events"] == ["message_taken"] and not changed.json()["enabled"]
    one = await api.get(f"/api/notify-targets/{created['id']}", headers=owner)
    for response_text in (str(created), str(listed), changed.text, one.text):
        assert "very-secret-token" not in response_text and "/services/" not in response_text
    removed = await api.delete(f"/api/notify-targets/{created['id']}", headers=owner)
    assert removed.status_code == 204
    assert (await api.get("/api/notify-targets", headers=owner)).json()["data"] == []


async def test_the_url_is_sealed_in_the_database(api, owner, database):
    import asyncpg

    await _create(api, owner)
    connection = await asyncpg.connect(database)
    try:
        stored = await connection.fetchrow("SELECT url_enc, host FROM notify_target")
    finally:
        await connection.close()
    assert stored["url_enc"].startswith("v1.") and "secret" not in stored["url_enc"]
    assert stored["host"] == "hooks.example.com"


async def test_a_webhook_secret_is_shown_once_and_can_be_rotated(api, owner):
    created = await _create(api, owner, kind="webhook")
    secret = created["signing_secret"]
    assert len(secret) == 64 and created["signed"] is True
    again = (await api.get(f"/api/notify-targets/{created['id']}", headers=owner)).text
    listed = (await api.get("/api/notify-targets", headers=owner)).text
    assert secret not in again and secret not in listed
    rotated = (await api.patch(f"/api/notify-targets/{created['id']}", headers=owner,
                               json={"rotate_secret": True})).json()
    assert rotated["signing_secret"] not in (secret, None)
    chat = await _create(api, owner)
    refused = await api.patch(f"/api/notify-targets/{chat['id']}", headers=owner,
                              json={"rotate_secret": True})
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "rotate_secret"


@pytest.mark.parametrize("fields, field", [
    ({"kind": "sms"}, "kind"),
    ({"url": "ftp://hooks.example.com/x"}, "url"),
    ({"url": "https://"}, "url"),
    ({"url": "not a url"}, "url"),
    ({"events": []}, "events"),
    ({"events": ["call_ended"]}, "events"),
    ({"events": ["test"]}, "events"),
    ({"label": "x" * 201}, "label"),
    ({"enabled": "yes"}, "enabled"),
    ({"secret": "mine"}, "secret"),
])
async def test_bad_targets_are_refused_naming_the_field(api, owner, fields, field):
    response = await api.post("/api/notify-targets", headers=owner,
                              json={"kind": "chat_a", "url": SECRET_URL, **fields})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field
    assert (await api.get("/api/notify-targets", headers=owner)).json()["data"] == []


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:9000/hook", "http://localhost/hook", "http://[::1]/hook",
    "http://10.1.2.3/hook", "http://192.168.1.20/hook", "http://169.254.169.254/latest",
    "http://metadata.google.internal/computeMetadata", "http://[::ffff:127.0.0.1]/hook",
    # written so that only the client's reading of them is this machine
    "http://１２７.０.０.１:9000/hook", "http://127。0。0。1/hook", "http://2130706433/hook",
    "http://0177.0.0.1/hook", "http://0x7f.1/hook", "http://localhost./hook",
    "http://a@127.0.0.1/hook",
])
async def test_targets_on_this_machine_private_or_metadata_addresses_are_refused(
        api, owner, services, url):
    response = await api.post("/api/notify-targets", headers=owner,
                              json={"kind": "webhook", "url": url})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "egress_refused"
    assert "signing_secret" not in response.text


async def test_an_allowed_host_may_be_a_target(api, owner, services):
    await set_runtime(services, "egress.allow_hosts", "10.1.2.3, hooks.internal")
    for url in ("http://10.1.2.3/hook", "https://hooks.internal/x"):
        assert (await api.post("/api/notify-targets", headers=owner,
                               json={"kind": "webhook", "url": url})).status_code == 201


async def test_another_ordinary_account_gets_404_everywhere(api, owner, stranger, services):
    created = await _create(api, owner)
    path = f"/api/notify-targets/{created['id']}"
    await set_runtime(services, "notifications.enabled", True)
    answers = [
        await api.get(path, headers=stranger),
        await api.patch(path, headers=stranger, json={"enabled": False}),
        await api.delete(path, headers=stranger),
        await api.post(f"{path}/test", headers=stranger),
        await api.get(f"/api/notify-targets?account_id={created['account_id']}",
                      headers=stranger),
        await api.post("/api/notify-targets", headers=stranger,
                       json={"kind": "chat_a", "url": SECRET_URL,
                             "account_id": created["account_id"]}),
        await api.get("/api/notify-targets/not-a-uuid", headers=stranger),
    ]
    assert [answer.status_code for answer in answers] == [404] * len(answers)
    nothing = await api.get(f"/api/notify-targets/{uuid.uuid4()}", headers=stranger)
    assert answers[0].json() == nothing.json()  # the same 404 as for no target at all
    assert (await api.get("/api/notify-targets", headers=stranger)).json()["data"] == []
    assert (await api.get(path, headers=owner)).json()["enabled"] is True
    api.cookies.clear()  # signing in left the last session's cookie on the client
    assert (await api.get("/api/notify-targets")).status_code == 401


async def test_an_administrator_manages_another_accounts_targets(api, owner, admin):
    created = await _create(api, owner)
    account = created["account_id"]
    listed = await api.get(f"/api/notify-targets?account_id={account}", headers=admin)
    assert [target["id"] for target in listed.json()["data"]] == [created["id"]]
    made = await _create(api, admin, account_id=account, kind="chat_b")
    assert made["account_id"] == account
    changed = await api.patch(f"/api/notify-targets/{created['id']}", headers=admin,
                              json={"label": "Reception"})
    assert changed.json()["label"] == "Reception"
    assert (await api.delete(f"/api/notify-targets/{made['id']}", headers=admin)
            ).status_code == 204
    own = (await api.get("/api/notify-targets", headers=admin)).json()["data"]
    assert own == []


async def test_a_target_needs_the_encryption_key(database, tmp_path):
    boot = BootConfig({"storage.data_dir": str(tmp_path / "data")})
    services = Services.build(boot)
    async with running_app(services) as api:
        headers = await api.as_new_user(services, "owner@example.com")
        response = await api.post("/api/notify-targets", headers=headers,
                                  json={"kind": "chat_a", "url": SECRET_URL})
        assert response.status_code == 409
        assert response.json()["error"]["code"] == "encryption_key_missing"
        assert (await api.get("/api/notify-targets", headers=headers)).json()["data"] == []


async def test_nothing_is_sent_until_notifications_are_switched_on(api, owner, services):
    await allow_loopback(services)
    async with Receiver() as base:
        created = await _create(api, owner, url=f"{base}/hook")
        refused = await api.post(f"/api/notify-targets/{created['id']}/test", headers=owner)
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "notifications_off"


async def test_the_live_test_posts_each_kind_and_records_the_attempt(api, owner, services):
    await allow_loopback(services)
    await set_runtime(services, "notifications.enabled", True)
    receiver = Receiver()
    async with receiver as base:
        chat_a = await _create(api, owner, url=f"{base}/a")
        chat_b = await _create(api, owner, kind="chat_b", url=f"{base}/b")
        webhook = await _create(api, owner, kind="webhook", url=f"{base}/w")
        for target in (chat_a, chat_b, webhook):
            result = await api.post(f"/api/notify-targets/{target['id']}/test", headers=owner)
            assert result.status_code == 200
            assert result.json() == {"result": "delivered", "status_code": 200,
                                     "detail": "answered HTTP 200"}
    a, b, w = receiver.received
    assert a.json() == {"text": "Test notification from svc: this target receives "
                                "notifications."}
    assert b.json()["@type"] == "MessageCard" and "Test notification" in b.json()["text"]
    assert w.json()["event"] == "test" and w.headers["Idempotency-Key"].startswith("test-")
    assert verify_signature(webhook["signing_secret"].encode(), w.body,
                            w.headers[SIGNATURE_HEADER], int(time.time()))
    shown = (await api.get(f"/api/notify-targets/{webhook['id']}", headers=owner)).json()
    assert shown["last_attempt"]["result"] == "delivered"


async def test_the_live_test_reports_failure_and_the_gate(api, owner, services):
    await set_runtime(services, "notifications.enabled", True)
    receiver = Receiver(script=[503])
    async with receiver as base:
        await allow_loopback(services)
        created = await _create(api, owner, url=f"{base}/hook")
        failed = (await api.post(f"/api/notify-targets/{created['id']}/test",
                                 headers=owner)).json()
        assert failed == {"result": "failed", "status_code": 503,
                          "detail": "answered HTTP 503"}
        await set_runtime(services, "egress.allow_hosts", "")
        refused = (await api.post(f"/api/notify-targets/{created['id']}/test",
                                  headers=owner)).json()
        assert refused["result"] == "refused" and "loopback" in refused["detail"]
        assert len(receiver.received) == 1
    listed = (await api.get("/api/notify-targets", headers=owner)).json()["data"]
    assert listed[0]["last_attempt"]["result"] == "refused"


async def test_a_refused_target_answers_the_same_whether_its_port_is_open(api, owner, services):
    # Saved while loopback was allowed, in notations the client reads as 127.0.0.1;
    # once it is no longer allowed, the test connects to nothing and cannot tell an
    # open port from a closed one.
    await set_runtime(services, "notifications.enabled", True)
    await allow_loopback(services)
    with SilentListener() as listener:
        listening = await _create(api, owner, kind="webhook",
                                  url=f"http://１２７.０.０.１:{listener.port}/hook")
        closed = await _create(api, owner, kind="webhook",
                               url=f"http://127。0。0。1:{free_port()}/hook")
        assert listening["host"] == closed["host"] == "127.0.0.1"
        await set_runtime(services, "egress.allow_hosts", "")
        answers = [(await api.post(f"/api/notify-targets/{target['id']}/test",
                                   headers=owner)).json() for target in (listening, closed)]
        assert answers[0] == answers[1] == {
            "result": "refused", "status_code": None,
            "detail": "the egress gate refused 127.0.0.1: loopback (this machine)"}
        assert listener.connections() == 0


async def test_the_live_test_allows_a_small_burst_per_caller_then_429(api, owner, admin,
                                                                      services):
    await set_runtime(services, "notifications.enabled", True)
    await allow_loopback(services)
    receiver = Receiver()
    async with receiver as base:
        created = await _create(api, owner, url=f"{base}/hook")
        path = f"/api/notify-targets/{created['id']}/test"
        for _ in range(TEST_PACE.burst):
            assert (await api.post(path, headers=owner)).status_code == 200
        refused = await api.post(path, headers=owner)
        assert refused.status_code == 429
        assert int(refused.headers["Retry-After"]) >= 1
        assert refused.json() == {"error": {
            "code": "too_many_tests", "field": None,
            "message": f"Too many tests in a row; try again in "
                       f"{refused.headers['Retry-After']} seconds."}}
        assert len(receiver.received) == TEST_PACE.burst  # the refused one sent nothing
        attempts = (await api.get(f"/api/notify-targets/{created['id']}/attempts",
                                  headers=owner)).json()["data"]
        assert len(attempts) == TEST_PACE.burst
        # the burst is the caller's own: an administrator may still test the target
        assert (await api.post(path, headers=admin)).status_code == 200


@pytest.mark.parametrize("kind", ["chat_a", "chat_b", "webhook"])
async def test_a_plain_http_address_is_refused_as_the_form_says_https(api, owner, kind):
    plain = SECRET_URL.replace("https://", "http://")
    refused = await api.post("/api/notify-targets", headers=owner,
                             json={"kind": kind, "url": plain})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "https_required"
    assert refused.json()["error"]["field"] == "url"
    assert "https://" in refused.json()["error"]["message"]
    assert (await api.get("/api/notify-targets", headers=owner)).json()["data"] == []
    created = await _create(api, owner, kind=kind)
    moved = await api.patch(f"/api/notify-targets/{created['id']}", headers=owner,
                            json={"url": plain, "label": "changed"})
    assert moved.status_code == 422 and moved.json()["error"]["field"] == "url"
    kept = (await api.get(f"/api/notify-targets/{created['id']}", headers=owner)).json()
    assert kept["updated_at"] == created["updated_at"] and kept["label"] is None
