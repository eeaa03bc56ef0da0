"""HTTP fuzzing: Schemathesis generates requests for every operation of the service's
own OpenAPI document (``/openapi.json``) and sends them to the application over
loopback, signed in as the superadmin (``/v1`` with an API key of the same account).

Whatever it sends: never a 5xx, and every 4xx carries the error shape — under ``/api``
``{"error": {"code", "message", "field"}}``, under ``/v1`` OpenAI's
``{"error": {"message", "type", "param", "code"}}``. The pbx questions answer a
refusal with an empty body by design (spec: telephony.md "Setup:
own-telephone-system transport": an empty answer hangs up), and carrier webhooks
answer in TwiML's world, so both are held to "no 5xx" only.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import string
import uuid
from dataclasses import dataclass

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from app.services.call_context import CallContext
from app.tables import TelephonyCall
from tests.app.telephony.deployment import SHARED_SECRET, deployment
from tests.fuzz.test_chat_request import bodies as chat_bodies
from tests.support.diary import LONDON_DIARY
from tests.support.http import ApiClient
from tests.support.live import live_app, sign_in

EXAMPLES_PER_OPERATION = 12
# Signing out or changing the password would end the session the other cases use;
# those two run with an account of their own.
OWN_SESSION = {"/api/auth/logout", "/api/me/password"}
accounts = itertools.count()


@dataclass
class World:
    """The accounts and resources the fuzzer's requests may name."""

    admin: dict[str, str]  #: the superadmin, for /api/admin and the telephony settings
    owner: dict[str, str]  #: an ordinary account owning an agent, a project, a library
    api_key: dict[str, str]  #: the owner's API key, for /v1
    ids: dict[str, str]  #: path parameter name -> an id that exists


async def populate(app) -> World:
    async with ApiClient(base_url=app.base_url, timeout=30) as api:
        found = await deployment(api, app.services)
        await api.post("/api/admin/providers", headers=found.admin, json={
            "name": "fake", "base_url": app.upstream.base_url, "api_key": "instance-key",
            "models": ["fake-small"]})
        provider = (await api.get("/api/admin/providers", headers=found.admin)).json()["data"][0]
        minted = await api.post("/api/profile/api-keys", headers=found.owner, json={"name": "k"})
        project = await api.post("/api/projects", headers=found.owner, json={"name": "P"})
        library = await api.post("/api/libraries", headers=found.owner, json={"name": "L"})
        # The administrator's requests may disable or demote the account they name:
        # one that no other request signs in with.
        await api.as_new_user(app.services, "other@example.org")
        other = next(user for user in (await api.get("/api/admin/users", headers=found.admin)
                                       ).json()["data"] if user["email"] == "other@example.org")
        document = await api.post(f"/api/libraries/{library.json()['id']}/documents",
                                  headers=found.owner, json={"title": "T", "content": "Text."})
        target = await api.post("/api/notify-targets", headers=found.owner, json={
            "kind": "chat_a", "url": "https://hooks.example.com/services/T/B/X"})
        await api.post("/api/conflict-names", headers=found.owner, json={"names": "Jane Smith"})
        names = (await api.get("/api/conflict-names", headers=found.owner)).json()["names"]
        await api.put("/api/diary", headers=found.owner, json=LONDON_DIARY)
        slot = (await api.get("/api/diary/slots", headers=found.owner)).json()["data"][0]
        appointment = await api.post("/api/diary/appointments", headers=found.owner, json={
            "starts_at": slot["starts_at"], "caller_name": "Jane Smith", "subject": "Lease"})
        call = TelephonyCall(number_id=found.line["id"], e164=found.line["e164"],
                             from_number="+441632960777", provider="carrier",
                             owner_id=found.owner_id)
        await call.save()
        enquiry = await app.services.diary.enquiries.take(
            CallContext(call.id, uuid.UUID(found.line["id"]), uuid.UUID(found.owner_id),
                        "+441632960777"), caller_name="Jane", subject="Boiler",
            message="Leaking.")
        ids = {"line_id": found.line["id"], "agent_id": found.agent_id,
               "user_id": other["id"], "account_id": other["id"],
               "provider_id": provider["id"], "project_id": project.json()["id"],
               "library_id": library.json()["id"], "document_id": document.json()["id"],
               "key": "features.voice", "target_id": target.json()["id"],
               "name_id": names[0]["id"], "appointment_id": appointment.json()["id"],
               "enquiry_id": str(enquiry["id"]), "call_id": str(call.id)}
        return World(found.admin, found.owner,
                     {"Authorization": f"Bearer {minted.json()['key']}"}, ids)


@pytest.fixture(scope="module")
def served(postgres, tmp_path_factory):
    from app.config import BootConfig

    data = tmp_path_factory.mktemp("openapi")
    boot = BootConfig({"storage.data_dir": str(data / "data"),
                       "storage.recordings_dir": str(data / "data" / "recordings"),
                       "message_encryption_key": "ab" * 32,
                       "server.public_url": "http://127.0.0.1:8080"})
    with live_app(postgres, boot) as app:
        yield app, app.call(populate(app))


def headers_for(path: str, world: World) -> dict[str, str]:
    if path.startswith("/v1"):
        return world.api_key
    if path.startswith(("/api/admin", "/api/telephony")):
        return world.admin
    return world.owner


def naming_what_exists(case, world: World):
    """The same request with its path naming resources that exist."""
    for name in case.path_parameters or {}:
        if name in world.ids:
            case.path_parameters[name] = world.ids[name]
    return case


def check_error_shape(path: str, response) -> None:
    body = response.json()
    assert isinstance(body, dict) and isinstance(body.get("error"), dict), response.text
    error = body["error"]
    if path.startswith("/v1"):
        assert {"message", "type", "param", "code"} <= error.keys(), response.text
    else:
        assert {"code", "message", "field"} <= error.keys(), response.text
    assert isinstance(error["message"], str) and error["message"], response.text


def cases_of(operation) -> st.SearchStrategy:
    """Requests that fit the document and requests that break it, for one operation."""
    strategies = [operation.as_strategy(GenerationMode.POSITIVE)]
    with contextlib.suppress(Exception):  # not every operation has anything to break
        strategies.append(operation.as_strategy(GenerationMode.NEGATIVE))
    return st.tuples(st.one_of(strategies), st.booleans())


# -- what the document cannot describe: bodies read by hand


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(body=chat_bodies, stream=st.booleans(), model=st.sampled_from([None, "fake-small"]))
def test_any_chat_completion_body_is_answered_or_refused_in_the_openai_shape(
        served, body, stream, model):
    app, world = served
    if isinstance(body, dict):
        body = {**body, **({"stream": True} if stream else {}),
                **({"model": model} if model else {})}
    response = httpx.post(f"{app.base_url}/v1/chat/completions", headers=world.api_key,
                          json=body, timeout=30)
    assert response.status_code < 500, response.text[:300]
    if response.status_code >= 400:
        check_error_shape("/v1", response)


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(body=st.binary(max_size=300),
       signature=st.one_of(st.none(), st.text(alphabet=string.ascii_letters + string.digits
                                              + "+/=", max_size=40)),
       query=st.text(max_size=30))
def test_any_carrier_webhook_without_the_right_signature_is_403(served, body, signature, query):
    app, _ = served
    headers = {"content-type": "application/x-www-form-urlencoded"}
    if signature is not None:
        headers["x-carrier-signature"] = signature
    response = httpx.post(f"{app.base_url}/api/telephony/carrier/voice", content=body,
                          params={"q": query} if query else None, headers=headers, timeout=30)
    assert response.status_code in (403, 429), response.text[:300]


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(params=st.dictionaries(st.sampled_from(["from", "to", "call", "x"]),
                              st.text(max_size=80), max_size=3),
       keyed=st.booleans())
def test_any_pbx_question_gets_text_or_an_empty_refusal(served, params, keyed):
    app, _ = served
    headers = {"x-service-telephony-key": SHARED_SECRET} if keyed else {}
    for question in ("answer", "continue"):
        response = httpx.get(f"{app.base_url}/api/telephony/pbx/{question}", params=params,
                             headers=headers, timeout=30)
        assert response.status_code == (200 if keyed else 403), response.text[:300]
        assert keyed or response.text == ""


# -- the whole document. Last in this module: its requests change settings (the
# telephony switch among them) that the cases above rely on.

def test_no_server_error_and_every_refusal_has_the_error_shape(served):
    app, world = served
    document = schemathesis.openapi.from_url(f"{app.base_url}/openapi.json")
    operations = [result.ok() for result in document.get_all_operations()]
    assert len(operations) > 50
    failures = []
    statuses: collections.Counter[int] = collections.Counter()

    for operation in operations:
        path = operation.path

        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(cases_of(operation))
        def one_request(drawn):
            case, existing = drawn
            if existing:
                case = naming_what_exists(case, world)
            if path in OWN_SESSION:
                headers = app.call(sign_in(app, f"own-{next(accounts)}@example.org"))
            else:
                headers = headers_for(path, world)
            response = case.call(base_url=app.base_url, headers=headers, timeout=30)
            statuses[response.status_code] += 1
            assert response.status_code < 500, f"{response.status_code}: {response.text[:300]}"
            if 400 <= response.status_code < 500 and not path.startswith("/api/telephony/"):
                check_error_shape(path, response)

        try:
            one_request()
        except Exception as error:  # gather every operation's failure, then report
            failures.append(f"{operation.method.upper()} {path}: {error}"[:1500])
    assert not failures, "\n\n".join(failures)
    print(sorted(statuses.items()))  # shown with -s
    # The run reached past the checks: some requests were accepted, many refused.
    assert sum(n for code, n in statuses.items() if code < 300) > len(operations) // 2
    assert sum(n for code, n in statuses.items() if 400 <= code < 500) > len(operations)
