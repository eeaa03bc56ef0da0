"""``svc serve`` as a real process: embedded PostgreSQL, first superadmin, SIGTERM."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.listener import free_port

pytestmark = pytest.mark.e2e


def svc(args, data_dir: Path, port: int, env_extra: dict[str, str] | None = None,
        **popen) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC__")}
    # One process, as before workers: test_serve_workers runs a supervisor with two.
    env.update(SVC__STORAGE__DATA_DIR=str(data_dir), SVC__SERVER__PORT=str(port),
               SVC__SERVER__WORKERS="1", **(env_extra or {}))
    if os.environ.get("SVC__DATABASE__URL"):
        env["SVC__DATABASE__URL"] = os.environ["SVC__DATABASE__URL"]
    return subprocess.Popen([sys.executable, "-m", "app.cli", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def wait_until_serving(process: subprocess.Popen) -> list[str]:
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise AssertionError("svc exited early:\n" + process.stderr.read())
        lines.append(line)
        if line.startswith("svc is serving"):
            return lines
    raise AssertionError("svc did not start in time")


def served_again(data_dir: Path, port: int) -> str:
    """What a later start printed before serving; it then stops cleanly."""
    again = svc(["serve"], data_dir, port)
    try:
        return "".join(wait_until_serving(again))
    finally:
        again.send_signal(signal.SIGTERM)
        assert again.wait(timeout=30) == 0


def test_serve_logs_in_and_stops_cleanly_on_sigterm(tmp_path):
    port = free_port()
    process = svc(["serve"], tmp_path / "data", port)
    try:
        printed = "".join(wait_until_serving(process))
        password = re.search(r"one-time password (\S+)", printed).group(1)
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/healthz").json()["database"] is True
        login = httpx.post(f"{base}/api/auth/login",
                           json={"email": "admin@localhost", "password": password})
        assert login.status_code == 200, login.text
        # A request in flight when SIGTERM arrives is still answered.
        body = b'{"email": "admin@localhost", "password": "not it at all"}'
        with socket.create_connection(("127.0.0.1", port)) as raw:
            raw.sendall(b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                        b"application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:10])
            time.sleep(0.2)
            process.send_signal(signal.SIGTERM)
            time.sleep(0.3)
            raw.sendall(body[10:])
            answer = raw.recv(4096)
        assert answer.startswith(b"HTTP/1.1 401")
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
    if not os.environ.get("SVC__DATABASE__URL"):
        assert not (tmp_path / "data" / "pg" / "postmaster.pid").exists()

    assert "one-time password" not in served_again(tmp_path / "data", port)


def test_a_taken_port_is_one_clear_line_and_exit_69(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        process = svc(["serve"], tmp_path / "data", holder.getsockname()[1])
        _, err = process.communicate(timeout=60)
    assert process.returncode == 69
    assert err.strip().count("\n") == 0 and "port is taken" in err


def test_an_unwritable_data_directory_is_one_clear_line_and_exit_73(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    process = svc(["serve"], blocker / "data", free_port())
    _, err = process.communicate(timeout=60)
    assert process.returncode == 73
    assert err.strip().count("\n") == 0 and "not writable" in err


@pytest.mark.parametrize("command", [["serve"], ["telephony", "check"]])
def test_an_unusable_message_key_is_one_clear_line_and_exit_78(tmp_path, command):
    process = svc(command, tmp_path / "data", free_port(),
                  env_extra={"SVC__MESSAGE_ENCRYPTION_KEY": "too-short"})
    out, err = process.communicate(timeout=60)
    assert process.returncode == 78, out + err
    refusal = [line for line in err.splitlines() if not line.startswith("{")]  # not logs
    assert refusal == [refusal[0]] and refusal[0].startswith("svc: configuration: ")
    assert "32 random bytes" in refusal[0]


def test_admin_create_reads_the_password_from_stdin(tmp_path):
    process = svc(["admin", "create", "--email", "ops@example.org", "--password-stdin",
                   "--role", "superadmin"], tmp_path / "data", free_port(), stdin=subprocess.PIPE)
    out, err = process.communicate("a long enough password\n", timeout=60)
    assert process.returncode == 0, err
    assert "created superadmin ops@example.org" in out


def _sign_in(base: str, printed: str) -> dict[str, str]:
    password = re.search(r"one-time password (\S+)", printed).group(1)
    login = httpx.post(f"{base}/api/auth/login",
                       json={"email": "admin@localhost", "password": password})
    assert login.status_code == 200, login.text
    session = {"Authorization": f"Bearer {login.json()['token']}"}
    # The one-time password is changed before anything else is allowed.
    changed = httpx.post(f"{base}/api/me/password", headers=session, json={
        "current_password": password, "new_password": "a new password for the test"})
    assert changed.status_code == 204, changed.text
    return session


@pytest.mark.skipif(bool(os.environ.get("SVC__DATABASE__URL")),
                    reason="the key is made for the embedded database only")
def test_the_first_start_makes_the_message_key_and_another_key_is_refused(tmp_path):
    port, data = free_port(), tmp_path / "data"
    first = svc(["serve"], data, port)
    try:
        printed = "".join(wait_until_serving(first))
        key = data / "message_encryption_key"
        assert printed.count(f"Made the message encryption key in {key}") == 1
        assert "Back it up" in printed and "SVC__MESSAGE_ENCRYPTION_KEY" in printed
        assert key.stat().st_mode & 0o777 == 0o600
        stored = httpx.put(f"http://127.0.0.1:{port}/api/admin/telephony",
                           headers=_sign_in(f"http://127.0.0.1:{port}", printed),
                           json={"carrier_credential": "a-carrier-token"})
        assert stored.status_code == 200, stored.text
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=30)

    other = svc(["serve"], data, port, env_extra={"SVC__MESSAGE_ENCRYPTION_KEY": "ab" * 32})
    out, err = other.communicate(timeout=60)
    assert other.returncode == 78, out + err
    refusal = [line for line in err.splitlines() if not line.startswith("{")]  # not logs
    assert len(refusal) == 1 and "sealed with another message encryption key" in refusal[0]
    assert "SVC__MESSAGE_ENCRYPTION_KEY" in refusal[0] and "svc is serving" not in out

    assert "message encryption key" not in served_again(data, port)
