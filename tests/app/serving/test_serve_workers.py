"""``svc serve --workers 2`` as a real deployment: one supervisor, its embedded
PostgreSQL, two workers forked on one socket, and proof that the workers agree.

One server for the module. Which worker answered a request is read from /proc: the
worker process holding the server end of the test's connection. Stopping the server
at the end is a test of its own, in the fixture: SIGTERM drains both workers, then
the supervisor stops PostgreSQL and exits 0.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from core.audiosocket import AudioSocketClient
from tests.support.listener import free_port
from tests.support.api_users import first_admin, user_with_key
from tests.support.notify_once import NOTIFYING, assert_each_posted_once, bookings_notified
from tests.support.pbx_deployment import (
    PBX,
    all_ended,
    answer_path,
    make_pbx_line,
    media_started,
    until,
)
from tests.support.processes import children, printed_once_serving, serve_logged

pytestmark = pytest.mark.e2e

O_CLOEXEC = 0o2000000


def _socket_inodes(pid: int) -> dict[int, int]:
    """inode -> fd of each socket the process holds."""
    held = {}
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            held[int(target[8:-1])] = int(fd.name)
    return held


def _server_end_inode(server_port: int, client_port: int) -> int | None:
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote = fields[1], fields[2]
            if (int(local.rsplit(":", 1)[1], 16) == server_port
                    and int(remote.rsplit(":", 1)[1], 16) == client_port):
                return int(fields[9])
    return None


@dataclass
class Deployment:
    process: subprocess.Popen
    port: int
    pbx_port: int
    data_dir: Path
    log: Path
    root: dict[str, str]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def workers(self) -> set[int]:
        return children(self.process.pid)

    def postgres(self) -> int:
        """The embedded PostgreSQL's postmaster (it runs detached, not as a child)."""
        return int((self.data_dir / "pg" / "postmaster.pid").read_text().split()[0])

    def holder(self, server_port: int, client: socket.socket) -> int:
        """The worker holding the server end of ``client``'s connection, once accepted."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            inode = _server_end_inode(server_port, client.getsockname()[1])
            for pid in self.workers():
                if inode in _socket_inodes(pid):
                    return pid
            time.sleep(0.05)
        raise AssertionError("no worker holds the connection")

    def connect(self) -> Connection:
        return Connection(self)

    def connection_on_each_worker(self) -> dict[int, Connection]:
        """A kept-alive connection served by each worker (new ones until each has one)."""
        found: dict[int, Connection] = {}
        for _ in range(200):
            connection = self.connect()
            pid = connection.worker()
            if pid in found:
                connection.close()
            else:
                found[pid] = connection
            if len(found) == len(self.workers()):
                return found
        raise AssertionError(f"connections reached only {sorted(found)}")


class Connection:
    """One kept-alive HTTP connection, and the worker that serves it."""

    def __init__(self, deployment: Deployment) -> None:
        self.deployment = deployment
        self.http = http.client.HTTPConnection("127.0.0.1", deployment.port, timeout=30)

    def request(self, method: str, path: str, headers: dict[str, str] | None = None,
                body: object = None) -> tuple[int, dict]:
        status, data = self.raw(method, path, headers, body)
        return status, json.loads(data) if data else {}

    def raw(self, method: str, path: str, headers: dict[str, str] | None = None,
            body: object = None) -> tuple[int, bytes]:
        payload = None if body is None else json.dumps(body)
        self.http.request(method, path, body=payload, headers={
            **(headers or {}), **({"Content-Type": "application/json"} if payload else {})})
        answer = self.http.getresponse()
        return answer.status, answer.read()

    def worker(self) -> int:
        """The worker holding the server end (a first request makes it accepted)."""
        self.request("GET", "/healthz")
        return self.deployment.holder(self.deployment.port, self.http.sock)

    def close(self) -> None:
        self.http.close()


def _start(data_dir: Path, port: int, pbx_port: int) -> tuple[subprocess.Popen, Path]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC__")}
    env.update(SVC__STORAGE__DATA_DIR=str(data_dir), SVC__SERVER__PORT=str(port),
               SVC__TELEPHONY__PBX_LISTEN=f"127.0.0.1:{pbx_port}")
    data_dir.mkdir(parents=True)
    log = data_dir.parent / "out.log"
    return serve_logged(["serve", "--workers", "2"], env, log), log


def _stops_everything_on_sigterm(deployment: Deployment) -> None:
    """SIGTERM: each worker drains and ends, then PostgreSQL stops, then exit 0."""
    workers = deployment.workers()
    postgres = deployment.postgres()
    assert len(workers) == 2 and Path(f"/proc/{postgres}").exists()
    deployment.process.send_signal(signal.SIGTERM)
    assert deployment.process.wait(timeout=90) == 0
    for pid in workers | {postgres}:
        assert not Path(f"/proc/{pid}").exists() or \
            "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
    assert not (deployment.data_dir / "pg" / "postmaster.pid").exists()


@pytest.fixture(scope="module")
def deployment(tmp_path_factory) -> Iterator[Deployment]:
    workdir = tmp_path_factory.mktemp("workers")
    port, pbx_port = free_port(), free_port()
    process, log = _start(workdir / "data", port, pbx_port)
    try:
        printed = printed_once_serving(process, log, seconds=120)
        assert printed.count("svc is serving") == 1 and "(2 workers)" in printed
        assert printed.count("one-time password") == 1  # the first admin, made once
        root = first_admin(f"http://127.0.0.1:{port}", printed)
        deployment = Deployment(process, port, pbx_port, workdir / "data", log, root)
        yield deployment
        _stops_everything_on_sigterm(deployment)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _api_key(deployment: Deployment) -> tuple[str, dict[str, str]]:
    return user_with_key(deployment.base, deployment.root,
                         f"dev{secrets.token_hex(4)}@example.org", "workers")


def _setting_everywhere(deployment: Deployment, key: str, value: object) -> None:
    """Write a runtime setting through one worker; poll each worker until it reads it."""
    written = httpx.put(f"{deployment.base}/api/admin/settings/{key}",
                        headers=deployment.root, json={"value": value})
    assert written.status_code == 200, written.text
    _seen_everywhere(deployment, f"/api/admin/settings/{key}",
                     lambda body: body.get("value") == value)


def _seen_everywhere(deployment: Deployment, path: str, seen) -> None:
    """Poll ``path`` on each worker until ``seen(body)`` holds on every one."""
    connections = deployment.connection_on_each_worker()
    try:
        deadline = time.monotonic() + 30
        pending = set(connections)
        while pending and time.monotonic() < deadline:
            for pid in list(pending):
                status, body = connections[pid].request("GET", path, deployment.root)
                if status == 200 and seen(body):
                    pending.discard(pid)
            time.sleep(0.05)
        assert not pending, f"{path} not as expected on workers {sorted(pending)}"
    finally:
        for connection in connections.values():
            connection.close()


# -- the deployment ------------------------------------------------------------------


def test_two_workers_serve_one_socket_and_the_socket_is_close_on_exec(deployment):
    workers = deployment.workers()
    assert len(workers) == 2
    assert set(deployment.connection_on_each_worker()) == workers
    for pid in workers:
        flags = [flag for fd in _socket_inodes(pid).values()
                 if (flag := _fd_flags(pid, fd)) is not None]
        # Every socket a worker holds (the listening one among them) is close-on-exec:
        # a program it runs, such as a speech subprocess, holds none.
        assert flags and all(flag & O_CLOEXEC for flag in flags), flags


def _fd_flags(pid: int, fd: int) -> int | None:
    """The open flags of a process's descriptor; None once it has closed (a client's
    connection may end between listing the descriptors and reading one)."""
    try:
        info = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
    except FileNotFoundError:
        return None
    return int(re.search(r"flags:\s+(\d+)", info).group(1), 8)


def test_a_runtime_setting_reaches_every_worker(deployment):
    _setting_everywhere(deployment, "api.cors_allow_all", True)
    _setting_everywhere(deployment, "api.cors_allow_all", False)


def test_the_per_key_limit_is_exact_across_workers(deployment):
    _setting_everywhere(deployment, "api.rate_per_min", 5)
    try:
        key, _ = _api_key(deployment)

        async def burst() -> list[httpx.Response]:
            limits = httpx.Limits(max_keepalive_connections=0)  # a new connection each
            async with httpx.AsyncClient(timeout=30, limits=limits) as client:
                return await asyncio.gather(*[
                    client.get(f"{deployment.base}/v1/models",
                               headers={"Authorization": f"Bearer {key}"})
                    for _ in range(16)])

        answers = asyncio.run(burst())
        assert sorted(a.status_code for a in answers) == [200] * 5 + [429] * 11
    finally:
        _setting_everywhere(deployment, "api.rate_per_min", 60)


def test_a_revoked_key_is_refused_at_once_by_every_worker(deployment):
    key, session = _api_key(deployment)
    bearer = {"Authorization": f"Bearer {key}"}
    connections = deployment.connection_on_each_worker()
    try:
        for connection in connections.values():  # each worker now keeps the identity
            assert connection.request("GET", "/v1/models", bearer)[0] == 200
        listed = httpx.get(f"{deployment.base}/api/profile/api-keys", headers=session)
        revoked = httpx.delete(f"{deployment.base}/api/profile/api-keys/"
                               f"{listed.json()['data'][0]['id']}", headers=session)
        assert revoked.status_code == 200, revoked.text
        for connection in connections.values():  # no pause
            status, body = connection.request("GET", "/v1/models", bearer)
            assert (status, body["error"]["code"]) == (401, "invalid_api_key")
    finally:
        for connection in connections.values():
            connection.close()


def test_a_killed_worker_is_restarted_and_serves(deployment):
    before = deployment.workers()
    victim = min(before)
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        now = deployment.workers()
        if victim not in now and len(now) == 2:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the killed worker was not replaced")
    (replacement,) = now - before
    connections = deployment.connection_on_each_worker()
    try:
        assert replacement in connections
        assert connections[replacement].request("GET", "/healthz")[1]["database"] is True
    finally:
        for connection in connections.values():
            connection.close()
    assert "worker died; restarting it" in deployment.log.read_text()


def test_each_notification_is_posted_once(deployment):
    """Bookings made through both workers at once; every outbox row reaches the
    receiver once (the outbox is polled by one worker of the host; the claim's lock
    keeps a second poller, on this host or another, off the rows it posts)."""
    for key, value in NOTIFYING:
        _setting_everywhere(deployment, key, value)
    try:
        receiver, attempts = asyncio.run(bookings_notified(deployment.base, deployment.root, 12))
        assert_each_posted_once(receiver, attempts, 12)
    finally:
        _setting_everywhere(deployment, "notifications.enabled", False)


# -- telephone calls -----------------------------------------------------------------

@pytest.fixture(scope="module")
def pbx_line(deployment) -> None:
    """A pbx line answered by an agent of the superadmin's."""
    make_pbx_line(deployment.base, deployment.root,
                  lambda key, value: _setting_everywhere(deployment, key, value),
                  lambda path, check: _seen_everywhere(deployment, path, check))


def _redeemed_by(deployment: Deployment, identifier: str) -> tuple[int, socket.socket]:
    """Present the ticket on the AudioSocket listener; the worker that took it. (The
    identifier is the ticket, not the call's id: the redeemed call is the one whose
    media started.)"""
    started = media_started(deployment.base, deployment.root)
    media = socket.create_connection(("127.0.0.1", deployment.pbx_port))
    media.sendall(AudioSocketClient(uuid.UUID(identifier)).data_to_send())
    worker = deployment.holder(deployment.pbx_port, media)
    until(lambda: media_started(deployment.base, deployment.root) == started + 1,
          f"ticket {identifier} was not redeemed")
    return worker, media


def _hang_up(deployment: Deployment, media: socket.socket) -> None:
    media.close()
    until(lambda: all_ended(deployment.base, deployment.root), "a call did not end")


def test_the_call_cap_holds_and_tickets_redeem_on_any_worker(deployment, pbx_line):
    _setting_everywhere(deployment, "telephony.max_concurrent_calls", 2)

    async def ring_at_once() -> list[httpx.Response]:
        limits = httpx.Limits(max_keepalive_connections=0)  # a new connection each
        async with httpx.AsyncClient(timeout=30, limits=limits) as client:
            return await asyncio.gather(*[client.get(deployment.base + answer_path(), headers=PBX)
                                          for _ in range(8)])

    answers = asyncio.run(ring_at_once())
    assert all(answer.status_code == 200 for answer in answers), [
        (answer.status_code, answer.text) for answer in answers]
    tickets = [answer.text.strip() for answer in answers if answer.text.strip()]
    assert len(tickets) == 2, httpx.get(  # the cap, across both workers
        f"{deployment.base}/api/admin/audit", headers=deployment.root).text[:1500]
    redeemed = [_redeemed_by(deployment, identifier)[1] for identifier in tickets]
    for media in redeemed:
        _hang_up(deployment, media)

    # Each worker mints; whichever worker accepts the media connection redeems.
    pairs = set()
    connections = deployment.connection_on_each_worker()
    try:
        for _ in range(6):
            for minter, connection in connections.items():
                status, body = connection.raw("GET", answer_path(), PBX)
                identifier = body.decode().strip()
                assert status == 200 and identifier, httpx.get(
                    f"{deployment.base}/api/admin/audit", headers=deployment.root).text[:600]
                redeemer, media = _redeemed_by(deployment, identifier)
                pairs.add((minter, redeemer))
                _hang_up(deployment, media)
            if any(minter != redeemer for minter, redeemer in pairs):
                break
    finally:
        for connection in connections.values():
            connection.close()
    assert any(minter != redeemer for minter, redeemer in pairs), pairs


def test_the_listen_address_check_names_every_worker(deployment, pbx_line):
    """Each worker serves the AudioSocket socket its supervisor bound and says so in
    its lease; the readiness check, asked of any one worker, names them all."""
    def every_worker_named() -> bool:
        found = httpx.get(f"{deployment.base}/api/admin/telephony/check",
                          headers=deployment.root).json()
        [check] = [check for check in found["checks"] if check["id"] == "listen_address"]
        return check["status"] == "pass" and all(
            f"process {pid} on " in check["message"] for pid in deployment.workers())

    until(every_worker_named, "the listen address check did not name every worker")
