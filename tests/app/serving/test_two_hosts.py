"""Two hosts of one deployment: two ``svc serve`` processes, each with a data directory
of its own, on one PostgreSQL that neither embeds (``database.url``, the same
``message_encryption_key``), as docs/deployment.md "More than one machine" describes.

What must hold across them: a call admitted by one host (its AudioSocket ticket minted
there) is streamed by the other, and the call limit counts the calls of both; the
per-key limit is exact over both; a key revoked through one is refused by the other
at once; a runtime setting written through one is read by the other; each outward
notification is posted once although both poll the outbox; the daily sweep runs once a
day although both fire it (here every two seconds, ``retention.sweep_schedule``).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from core.audiosocket import AudioSocketClient
from tests.support.listener import free_port
from tests.support import pbx_deployment as line
from tests.support.api_users import first_admin, user_with_key
from tests.support.notify_once import NOTIFYING, assert_each_posted_once, bookings_notified
from tests.support.processes import printed_once_serving, serve_logged, stop_process

pytestmark = pytest.mark.e2e


#: Both hosts fire the daily sweep every two seconds; the day's claim lets one run it.
SWEEP_SCHEDULE = "*/2 * * * * *"


@dataclass
class Host:
    process: subprocess.Popen
    port: int
    pbx_port: int
    log: Path

    def sweeps(self) -> list[bool]:
        """Whether this host ran the sweep, each time its scheduler fired."""
        lines = (json.loads(line) for line in self.log.read_text().splitlines()
                 if line.startswith("{"))
        return [line["ran_here"] for line in lines if line.get("message") == "daily sweep"]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class TwoHosts:
    a: Host
    b: Host
    root: dict[str, str]

    def everywhere(self, key: str, value: object) -> None:
        """Write a runtime setting through host A; return once both hosts read it."""
        written = httpx.put(f"{self.a.base}/api/admin/settings/{key}", headers=self.root,
                            json={"value": value})
        assert written.status_code == 200, written.text
        self.seen(f"/api/admin/settings/{key}", lambda body: body.get("value") == value)

    def seen(self, path: str, check) -> None:
        for host in (self.a, self.b):
            line.until(lambda: check(httpx.get(host.base + path, headers=self.root).json()),
                  f"{path} not as expected on {host.base}")


def _serve(workdir: Path, name: str, dsn: str, key: str) -> tuple[Host, str]:
    """One host: ``svc serve`` on its own ports and data directory; what it printed."""
    data_dir = workdir / name
    data_dir.mkdir()
    port, pbx_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC__")}
    env.update(SVC__DATABASE__URL=dsn, SVC__MESSAGE_ENCRYPTION_KEY=key,
               SVC__STORAGE__DATA_DIR=str(data_dir), SVC__SERVER__PORT=str(port),
               # One process a host: what a host reads back is what the same process
               # serves with (workers within a host are proved in test_serve_workers).
               SVC__SERVER__WORKERS="1",
               SVC__TELEPHONY__PBX_LISTEN=f"127.0.0.1:{pbx_port}",
               SVC__RETENTION__SWEEP_SCHEDULE=SWEEP_SCHEDULE)
    log = workdir / f"{name}.log"
    process = serve_logged(["serve"], env, log)
    return Host(process, port, pbx_port, log), printed_once_serving(process, log, seconds=120)


@pytest.fixture(scope="module")
def hosts(postgres, tmp_path_factory) -> Iterator[TwoHosts]:
    workdir = tmp_path_factory.mktemp("two-hosts")
    name = f"svc_two_hosts_{os.getpid()}"
    dsn = asyncio.run(postgres.clone_template(name))
    key = secrets.token_hex(32)
    started: list[Host] = []
    try:
        # One after the other: the first migrates and makes the first superadmin.
        a, printed = _serve(workdir, "a", dsn, key)
        started.append(a)
        root = first_admin(a.base, printed)
        b, printed = _serve(workdir, "b", dsn, key)
        started.append(b)
        assert "one-time password" not in printed  # the first admin exists already
        yield TwoHosts(a, b, root)
    finally:
        for host in started:
            stop_process(host.process, timeout=60)
        asyncio.run(postgres.drop(name))


def test_a_call_admitted_by_one_host_is_streamed_by_the_other(hosts):
    line.make_pbx_line(hosts.a.base, hosts.root, hosts.everywhere, hosts.seen)
    hosts.everywhere("telephony.max_concurrent_calls", 1)
    ticket = httpx.get(hosts.a.base + line.answer_path(), headers=line.PBX)
    assert ticket.status_code == 200 and ticket.text.strip(), ticket.text
    media = socket.create_connection(("127.0.0.1", hosts.b.pbx_port))
    try:
        media.sendall(AudioSocketClient(uuid.UUID(ticket.text.strip())).data_to_send())
        line.until(lambda: line.media_started(hosts.a.base, hosts.root) == 1,
              "host B did not take the call host A admitted")
        # The call on B counts against the limit on A, and the other way round.
        for host in (hosts.a, hosts.b):
            refused = httpx.get(host.base + line.answer_path(), headers=line.PBX)
            assert refused.status_code == 200 and not refused.text.strip(), refused.text
    finally:
        media.close()
    line.until(lambda: line.all_ended(hosts.b.base, hosts.root), "the call did not end")
    again = httpx.get(hosts.b.base + line.answer_path(), headers=line.PBX)
    assert again.status_code == 200 and again.text.strip(), again.text


def test_limits_revocation_settings_the_outbox_and_the_sweep_hold_across_hosts(hosts):
    hosts.everywhere("api.rate_per_min", 5)
    key, _ = user_with_key(hosts.a.base, hosts.root, "two-hosts@example.org")
    bearer = {"Authorization": f"Bearer {key}"}

    async def burst() -> list[int]:
        async with httpx.AsyncClient(timeout=30) as client:
            answers = await asyncio.gather(*[
                client.get(f"{host.base}/v1/models", headers=bearer)
                for host in (hosts.a, hosts.b) for _ in range(8)])
        return sorted(answer.status_code for answer in answers)

    assert asyncio.run(burst()) == [200] * 5 + [429] * 11
    hosts.everywhere("api.rate_per_min", 60)

    other, other_session = user_with_key(hosts.a.base, hosts.root, "revoked@example.org")
    other_bearer = {"Authorization": f"Bearer {other}"}
    for host in (hosts.a, hosts.b):  # each host now keeps the identity
        assert httpx.get(f"{host.base}/v1/models", headers=other_bearer).status_code == 200
    listed = httpx.get(f"{hosts.a.base}/api/profile/api-keys", headers=other_session)
    revoked = httpx.delete(f"{hosts.a.base}/api/profile/api-keys/"
                           f"{listed.json()['data'][0]['id']}", headers=other_session)
    assert revoked.status_code == 200, revoked.text
    refused = httpx.get(f"{hosts.b.base}/v1/models", headers=other_bearer)  # no pause
    assert (refused.status_code, refused.json()["error"]["code"]) == (401, "invalid_api_key")

    for setting, value in NOTIFYING:
        hosts.everywhere(setting, value)
    receiver, attempts = asyncio.run(bookings_notified(
        hosts.a.base, hosts.root, 12, hosts=[hosts.a.base, hosts.b.base]))
    assert_each_posted_once(receiver, attempts, 12)

    # Each host's scheduler has fired again and again by now; the day was swept once.
    line.until(lambda: all(len(host.sweeps()) >= 2 for host in (hosts.a, hosts.b)),
               "a host's scheduler did not fire the sweep")
    assert sum(hosts.a.sweeps() + hosts.b.sweeps()) == 1, (hosts.a.sweeps(), hosts.b.sweeps())
