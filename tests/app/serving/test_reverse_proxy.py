"""svc behind nginx as docs/deployment.md sets it up: https and wss on the outside,
plain HTTP on loopback inside, ``server.trusted_proxies`` naming the proxy.

The nginx configuration is the fenced block of the deployment guide, with only its
ports, server name and certificate paths replaced, so the guide cannot drift from what
is tested. nginx is Debian's package, installed by ``tools/_nginx.sh`` (sourced by
``./tools/test``) when it runs as root; elsewhere these tests are skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import ssl
import subprocess
import time
from pathlib import Path

import aiohttp
import httpx
import pytest
from twilio.request_validator import RequestValidator

from adapters.call_simulator import Caller, Listen, prepare, ring_carrier, transcribe
from app.tables import TelephonyCall, TelephonySignatureFailure
from tests.app.telephony.deployment import CREDENTIAL, deployment, voice_params
from tests.fakes.coded_speech import CodedRecogniser, CodedSynthesiser, normalise
from tests.support.http import running_app
from tests.support.listener import free_port
from tests.support.tls import self_signed

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "deployment.md"
GREETING, NOTICE = "Hello.", "A computer answers this line. How can I help?"
NGINX = (os.environ.get("SVC_TEST_NGINX") or shutil.which("nginx")
         or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None))
if NGINX is None:
    pytest.skip("no nginx here: ./tools/test installs Debian's nginx when run as root, or set "
                "SVC_TEST_NGINX=/path/to/nginx", allow_module_level=True)


def documented_site() -> str:
    """The guide's nginx block."""
    blocks = re.findall(r"```nginx\n(.*?)```", GUIDE.read_text(), re.S)
    assert len(blocks) == 1, "docs/deployment.md must hold exactly one nginx block"
    return blocks[0]


def _replace(text: str, pattern: str, replacement: str) -> str:
    changed, count = re.subn(pattern, replacement, text)
    assert count >= 1, f"docs/deployment.md's nginx block no longer has {pattern!r}"
    return changed


def nginx_conf(folder: Path, listen: int, upstream: int, cert: Path, key: Path) -> Path:
    site = documented_site()
    site = _replace(site, r"listen 443 ssl;", f"listen 127.0.0.1:{listen} ssl;")
    site = _replace(site, r"server_name \S+;", "server_name localhost;")
    site = _replace(site, r"ssl_certificate\s+\S+;", f"ssl_certificate {cert};")
    site = _replace(site, r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {key};")
    site = _replace(site, r"http://127\.0\.0\.1:8080;", f"http://127.0.0.1:{upstream};")
    temp = "\n".join(f"    {kind}_temp_path {folder}/{kind};"
                     for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    conf = folder / "nginx.conf"
    conf.write_text(
        ("user root;\n" if os.geteuid() == 0 else "")
        + f"daemon off;\nworker_processes 1;\npid {folder}/nginx.pid;\n"
        f"error_log {folder}/error.log warn;\nevents {{ worker_connections 64; }}\n"
        f"http {{\n    access_log off;\n{temp}\n{site}\n}}\n")
    return conf


def _wait_for_port(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"nginx stopped: {log.read_text() if log.exists() else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("nginx did not listen in time")


class Proxied:
    def __init__(self, client, services, setup, public: str, cert: Path) -> None:
        self.client = client
        self.services = services
        self.setup = setup
        self.public = public
        self.tls = ssl.create_default_context(cafile=str(cert))


@pytest.fixture
async def proxied(database, tmp_path):
    from app.bundle import Services
    from app.config import BootConfig
    from app.telephony.speech_engines import CallEngines

    listen = free_port()
    public = f"https://localhost:{listen}"
    services = Services.build(BootConfig({
        "storage.data_dir": str(tmp_path), "storage.recordings_dir": str(tmp_path / "rec"),
        "message_encryption_key": os.urandom(32).hex(), "server.public_url": public,
        "server.trusted_proxies": "127.0.0.1"}))
    services.settings.cache_seconds = 0

    async def instant_engines() -> CallEngines:
        return CallEngines(synthesiser=CodedSynthesiser(), recogniser=CodedRecogniser())

    services.call_voice.engines = instant_engines
    cert, key = self_signed(tmp_path)
    try:
        async with running_app(services) as client:
            upstream = int(str(client.base_url).rsplit(":", 1)[1].strip("/"))
            conf = nginx_conf(tmp_path, listen, upstream, cert, key)
            log = tmp_path / "error.log"
            nginx = subprocess.Popen([NGINX, "-p", str(tmp_path), "-e", str(log), "-c",
                                      str(conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
            try:
                _wait_for_port(listen, nginx, log)
                setup = await deployment(client, services)
                put = await client.put("/api/admin/telephony", headers=setup.admin,
                                       json={"public_base_url": public})
                assert put.status_code == 200, put.text
                await setup.setting("telephony.max_concurrent_calls", 20)
                await setup.setting("voice.phone.turn_detection", False)
                await setup.patch_line(greeting=GREETING, notice=NOTICE)
                yield Proxied(client, services, setup, public, cert)
            finally:
                nginx.terminate()
                nginx.wait(timeout=20)
    finally:
        await services.aclose()


async def test_a_whole_carrier_call_goes_through_the_proxy_over_https_and_wss(proxied):
    voice = "/api/telephony/carrier/voice"
    params = voice_params(call_sid="CA9001")
    signed = RequestValidator(CREDENTIAL).compute_signature(proxied.public + voice, params)
    async with httpx.AsyncClient(verify=proxied.tls) as carrier:
        answered = await carrier.post(proxied.public + voice, data=params,
                                      headers={"X-Twilio-Signature": signed})
    assert answered.status_code == 200, answered.text
    assert f'url="wss://localhost:{proxied.public.rsplit(":", 1)[1]}/' in answered.text

    caller = Caller(await prepare([Listen(quiet_ms=1500, timeout_s=30)], CodedSynthesiser()))
    connector = aiohttp.TCPConnector(ssl=proxied.tls)
    async with aiohttp.ClientSession(connector=connector) as http:
        report = await ring_carrier(server_url=proxied.public, public_base=proxied.public,
                                    credential=CREDENTIAL, caller_number="+447946000321",
                                    dialled=proxied.setup.line["e164"], caller=caller,
                                    http=http)
    await transcribe(report, CodedRecogniser())
    assert report.answered and report.fault is None, report
    from core.voice import compose_opening
    assert [reply.transcript for reply in report.replies] == [
        normalise(compose_opening(GREETING, NOTICE, recording=False))]
    call = await TelephonyCall.select().where(TelephonyCall.from_number == "+447946000321")
    assert len(call) == 1 and call[0]["outcome"] != "in_progress", call


async def _unsigned_from(address: str, url: str, tls) -> int:
    """A webhook with a wrong signature and a made-up X-Forwarded-For, sent from
    ``address`` (another loopback address than the proxy's)."""
    transport = httpx.AsyncHTTPTransport(local_address=address, verify=tls)
    async with httpx.AsyncClient(transport=transport) as client:
        answer = await client.post(url, data=voice_params(), headers={
            "X-Twilio-Signature": "bm90IGl0", "X-Forwarded-For": "198.51.100.7",
            "Forwarded": "for=198.51.100.8;proto=https"})
    return answer.status_code


async def test_forwarded_addresses_are_believed_from_the_proxy_only(proxied):
    voice = "/api/telephony/carrier/voice"
    # Through the proxy: it names the client it heard from, and what the client wrote
    # itself to the left of that is not believed.
    assert await _unsigned_from("127.0.0.9", proxied.public + voice, proxied.tls) == 403
    # Straight to svc from a peer that is no trusted proxy: its headers are ignored.
    assert await _unsigned_from("127.0.0.5", str(proxied.client.base_url).rstrip("/") + voice,
                                 None) == 403
    failures = [row["address"] for row in await TelephonySignatureFailure.select().order_by(
        TelephonySignatureFailure.id)]
    assert failures == ["127.0.0.9", "127.0.0.5"]
