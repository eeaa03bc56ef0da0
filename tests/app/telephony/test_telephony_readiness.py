"""The readiness check: eleven ids in the spec's order, a real synthesiser request to
a loopback speech server, and ``svc telephony check`` in a terminal."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field

import pytest
from aiohttp import web

from app import db
from app.tables import TelephonyLease
from app.telephony.readiness import CHECK_IDS
from tests.app.telephony.deployment import deployment
from tests.fakes.voice import tone
from tests.support.aiohttp_site import serving
from tests.support.settings import store_unchecked

pytestmark = pytest.mark.anyio

SPEECH_KEY = "speech-key-for-tests"


@dataclass
class FakeSpeech:
    """An OpenAI-compatible ``/v1/audio/speech`` answering a tenth of a second of tone."""

    requests: list[dict] = field(default_factory=list)
    base_url: str = ""

    async def speech(self, request: web.Request) -> web.Response:
        self.requests.append(await request.json())
        if request.headers.get("Authorization") != f"Bearer {SPEECH_KEY}":
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        return web.Response(body=tone(0.1, 24000), content_type="audio/pcm")


@pytest.fixture
async def speech():
    fake = FakeSpeech()
    app = web.Application()
    app.router.add_post("/v1/audio/speech", fake.speech)
    async with serving(app) as port:
        fake.base_url = f"http://127.0.0.1:{port}/v1"
        yield fake


async def ready_deployment(api, services, speech: FakeSpeech):
    setup = await deployment(api, services)
    await setup.setting("voice_live.tts_stream_url", speech.base_url)
    await setup.setting("voice_live.tts_api_key_enc", SPEECH_KEY)
    return setup


def checks(response) -> dict[str, dict]:
    body = response.json()
    assert [c["id"] for c in body["checks"]] == list(CHECK_IDS)
    return {c["id"]: c for c in body["checks"]}


async def test_a_ready_deployment_passes_every_check_in_order(api, services, speech):
    setup = await ready_deployment(api, services, speech)
    response = await api.get("/api/admin/telephony/preflight", headers=setup.admin)
    found = checks(response)
    assert response.json()["ready"] is True, found
    assert all(c["status"] == "pass" and c["message"] for c in found.values())
    asked = speech.requests[-1]
    assert asked["response_format"] == "pcm" and asked["model"] == "tts-1"
    assert asked["voice"] == "alloy" and asked["input"]
    assert "https://calls.example.org/api/telephony/carrier/voice" in (
        found["public_address"]["message"])


async def test_preflight_is_break_glass_and_check_needs_telephony_manage(api, services,
                                                                         speech):
    setup = await ready_deployment(api, services, speech)
    assert (await api.get("/api/admin/telephony/preflight",
                          headers=setup.manager)).status_code == 403
    assert checks(await api.get("/api/admin/telephony/check", headers=setup.manager))
    assert (await api.get("/api/admin/telephony/check",
                          headers=setup.owner)).status_code == 403


@pytest.mark.parametrize(("key", "value", "said"), [
    # A key the engine refuses: the sentence names the setting to fix.
    ("voice_live.tts_api_key_enc", "wrong", "voice_live.tts_api_key_enc"),
    ("voice_live.tts_stream_url", "http://127.0.0.1:1/v1", "did not answer"),
], ids=["refused_key", "no_answer"])
async def test_a_speech_engine_that_fails_fails_the_check_with_a_sentence(
        api, services, speech, key, value, said):
    setup = await ready_deployment(api, services, speech)
    await setup.setting(key, value)
    found = checks(await api.get("/api/admin/telephony/check", headers=setup.manager))
    assert found["synthesiser"]["status"] == "fail"
    assert said in found["synthesiser"]["message"]


async def test_the_local_engine_passes_only_when_installed(api, services):
    setup = await deployment(api, services)  # tts_stream_url is "local"
    found = checks(await api.get("/api/admin/telephony/check", headers=setup.manager))
    installed = importlib.util.find_spec("espeakng_loader") is not None
    assert (found["synthesiser"]["status"] == "pass") is installed
    if not installed:
        assert "pip install espeakng-loader" in found["synthesiser"]["message"]


async def test_failures_say_what_to_do(api, services):
    setup = await deployment(api, services, provider="pbx", line_provider="pbx",
                             switched_on=False)
    await api.put("/api/admin/telephony", headers=setup.admin,
                  json={"pbx_listen": "127.0.0.1:9092", "shared_secret": None})
    await store_unchecked(services, "voice_live.stt_sample_rate", 44100)  # before the rule
    await api.patch(f"/api/agents/{setup.agent_id}", headers=setup.owner,
                    json={"archived": True})
    found = checks(await api.get("/api/admin/telephony/preflight", headers=setup.admin))
    failed = {k for k, c in found.items() if c["status"] == "fail"}
    assert failed == {"feature", "listen_address", "shared_secret", "recognition_rate",
                      "synthesiser", "line_bindings"}
    assert "restart" in found["listen_address"]["message"]
    # Each says where to put it right: the console's screen, and the API's field.
    assert "in the telephone settings (shared_secret in PUT /api/admin/telephony)" in found[
        "shared_secret"]["message"]
    assert "only 8000 and 16000 convert" in found["recognition_rate"]["message"]
    assert found["carrier_credential"]["message"].startswith("Not needed")
    assert LINE in found["line_bindings"]["message"]
    services.telephony.listener.bound("127.0.0.1:9092")
    found = checks(await api.get("/api/admin/telephony/preflight", headers=setup.admin))
    assert found["listen_address"]["status"] == "pass"


async def test_the_recognition_check_says_which_recogniser_calls_use(api, services, speech):
    # The spec's prerequisites name the rate only, so a deployment without a recogniser
    # is ready; the message says that such a call understands nothing the caller says.
    setup = await ready_deployment(api, services, speech)
    response = await api.get("/api/admin/telephony/check", headers=setup.manager)
    said = checks(response)["recognition_rate"]
    assert response.json()["ready"] is True and said["status"] == "pass"
    assert "No recogniser is set" in said["message"]
    assert "voice_live.stt_url" in said["message"]
    for url, named in (("local", "the built-in engine"),
                       ("http://user:secret@127.0.0.1:9/v1", "the engine at 127.0.0.1:9 (set, "
                                                             "not tried")):
        await setup.setting("voice_live.stt_url", url)
        said = checks(await api.get("/api/admin/telephony/check",
                                    headers=setup.manager))["recognition_rate"]
        assert said["status"] == "pass" and named in said["message"], said
        assert "secret" not in said["message"]


LINE = "+441632960001"


async def test_the_listen_address_is_judged_in_every_serving_process(api, services):
    setup = await deployment(api, services, provider="pbx", line_provider="pbx")
    await api.put("/api/admin/telephony", headers=setup.admin,
                  json={"pbx_listen": "127.0.0.1:9092"})
    services.telephony.listener.bound("127.0.0.1:9092")  # this process listens
    others = [(1001, "127.0.0.1:9092", "now() + interval '15 seconds'"),
              (1002, None, "now() + interval '15 seconds'"),  # started before the change
              (1003, None, "now() - interval '1 second'")]  # lapsed: serves no more
    async with db.connection() as connection:
        for pid, address, expires in others:
            await connection.execute(
                "INSERT INTO telephony_lease (instance_id, process_id, host, expires_at, "
                f"pbx_listen) VALUES (gen_random_uuid(), $1, 'pbx-b', {expires}, $2)",
                pid, address)
    found = checks(await api.get("/api/admin/telephony/check", headers=setup.manager))
    listen = found["listen_address"]
    assert listen["status"] == "fail", listen
    assert "1 of 3 processes" in listen["message"]
    assert "process 1002 on pbx-b listens nowhere" in listen["message"]
    async with db.connection() as connection:
        await connection.execute("UPDATE telephony_lease SET pbx_listen = '127.0.0.1:9092' "
                                 "WHERE process_id = 1002")
    listen = checks(await api.get("/api/admin/telephony/check",
                                  headers=setup.manager))["listen_address"]
    assert listen["status"] == "pass", listen
    assert "all 3 processes" in listen["message"]
    assert f"process {os.getpid()} on {socket.gethostname()}" in listen["message"]


async def test_a_lease_records_the_address_its_process_listens_on(services):
    leases = services.telephony.leases
    await leases.renew()
    services.telephony.listener.bound("127.0.0.1:9092")
    await leases.renew()
    row = await TelephonyLease.select().where(
        TelephonyLease.instance_id == leases.instance_id).first()
    assert (row["process_id"], row["pbx_listen"]) == (os.getpid(), "127.0.0.1:9092")


async def test_nothing_registered_fails_lines(api, services, speech):
    setup = await ready_deployment(api, services, speech)
    await setup.patch_line(enabled=False)
    found = checks(await api.get("/api/admin/telephony/check", headers=setup.manager))
    assert found["lines"]["status"] == "fail" and "Register" in found["lines"]["message"]


def _terminal(database: str, encryption_key: str, tmp_path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SVC__DATABASE__URL": database,
           "SVC__MESSAGE_ENCRYPTION_KEY": encryption_key,
           "SVC__STORAGE__DATA_DIR": str(tmp_path / "cli-data"), "SVC_CONFIG": os.devnull}
    return subprocess.run([sys.executable, "-m", "app.cli", "telephony", "check"], env=env,
                          capture_output=True, text=True, timeout=120)


async def test_svc_telephony_check_prints_the_checks_and_exits_by_their_outcome(
        api, services, speech, database, encryption_key, tmp_path):
    import anyio.to_thread

    # Over the pbx, so no check asks beyond this machine (the carrier's public address
    # is asked through the network). The serving process is the one of ``api``: its
    # lease says where it listens.
    setup = await deployment(api, services, provider="pbx", line_provider="pbx")
    await setup.setting("voice_live.tts_stream_url", speech.base_url)
    await setup.setting("voice_live.tts_api_key_enc", SPEECH_KEY)
    put = await api.put("/api/admin/telephony", headers=setup.admin, json={
        "pbx_listen": "127.0.0.1:9092"})
    assert put.status_code == 200, put.text
    services.telephony.listener.bound("127.0.0.1:9092")
    await services.telephony.leases.renew()
    passed = await anyio.to_thread.run_sync(_terminal, database, encryption_key, tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    lines = passed.stdout.splitlines()
    assert [line.split()[1] for line in lines] == list(CHECK_IDS)
    assert all(line.startswith("pass") for line in lines)
    await setup.patch_line(enabled=False)
    services.telephony.listener.closed()
    await services.telephony.leases.renew()
    failed = await anyio.to_thread.run_sync(_terminal, database, encryption_key, tmp_path)
    assert failed.returncode == 1 and "FAIL  lines" in failed.stdout
    assert "FAIL  listen_address" in failed.stdout and "listens nowhere" in failed.stdout


async def test_the_public_address_is_asked_through_the_network(api, services, speech):
    from adapters.health_probe import HealthAnswer

    asked = []

    async def refused(url: str) -> HealthAnswer:
        asked.append(url)
        return HealthAnswer(None, "calls.example.org refused the connection")

    services.telephony.readiness.health_probe = refused
    setup = await ready_deployment(api, services, speech)
    found = checks(await api.get("/api/admin/telephony/preflight", headers=setup.admin))
    assert asked == ["https://calls.example.org/healthz"]
    assert found["public_address"]["status"] == "fail"
    assert "refused the connection" in found["public_address"]["message"]

    async def bad_gateway(url: str) -> HealthAnswer:
        return HealthAnswer(502)

    services.telephony.readiness.health_probe = bad_gateway
    found = checks(await api.get("/api/admin/telephony/preflight", headers=setup.admin))
    assert "answered HTTP 502" in found["public_address"]["message"]

    async def parked(url: str) -> HealthAnswer:
        return HealthAnswer(200, server="parking/1.0")  # 200, but not svc's answer

    services.telephony.readiness.health_probe = parked
    found = checks(await api.get("/api/admin/telephony/preflight", headers=setup.admin))
    assert found["public_address"]["status"] == "fail"
    assert "HTTP 200 (Server: parking/1.0), but not with svc's health answer" in (
        found["public_address"]["message"])

    async def database_away(url: str) -> HealthAnswer:
        return HealthAnswer(503, from_svc=True)

    services.telephony.readiness.health_probe = database_away
    found = checks(await api.get("/api/admin/telephony/preflight", headers=setup.admin))
    assert "reached svc, whose database cannot be reached" in (
        found["public_address"]["message"])
