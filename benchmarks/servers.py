"""Starting ``svc serve`` processes for the load benchmarks: on a database of their own
or on one they share, with the first superadmin signed in and a fake upstream as the
provider. Used by ``v1_rate_limit`` and ``soak``; prints nothing itself."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import httpx

from benchmarks.v1_passthrough import ROOT, _wait_for
from core.records import frozen
from tests.support.listener import free_port
from tests.support.processes import stop_process

MODEL = "fake-small"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "Tell me about foxes."}]}


@frozen
class Server:
    base: str  #: http://127.0.0.1:port
    log: Path
    pid: int


def serve(stack: ExitStack, workdir: Path, name: str, dsn: str | None,
          encryption_key: str) -> tuple[Server, str]:
    """Start one ``svc serve``; return it and what it printed until it was serving."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC__")}
    env.update(SVC__STORAGE__DATA_DIR=str(workdir / name), SVC__SERVER__PORT=str(port),
               SVC__MESSAGE_ENCRYPTION_KEY=encryption_key)
    if dsn:
        env["SVC__DATABASE__URL"] = dsn
    log = workdir / f"{name}.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-m", "app.cli", "serve"], cwd=ROOT,
                                   stdout=out, stderr=subprocess.STDOUT, env=env)
    stack.callback(stop_process, process)
    printed = _wait_for(log, process, "svc is serving")
    return Server(f"http://127.0.0.1:{port}", log, process.pid), printed


def sign_in_first_superadmin(base: str, printed: str) -> dict[str, str]:
    password = re.search(r"one-time password (\S+)", printed)
    if password is None:
        raise SystemExit("svc did not create a first superadmin: use an empty database")
    token = httpx.post(f"{base}/api/auth/login", json={
        "email": "admin@localhost", "password": password.group(1)}).json()["token"]
    return {"Authorization": f"Bearer {token}"}


def provide(base: str, root: dict[str, str], upstream: str, rate_per_min: int) -> None:
    """The fake upstream as the provider, and the per-key limit."""
    for method, path, body in (
            ("POST", "/api/admin/providers", {"name": "bench", "base_url": upstream,
                                              "api_key": "sk-bench", "models": [MODEL]}),
            ("PUT", "/api/admin/settings/api.rate_per_min", {"value": rate_per_min})):
        httpx.request(method, f"{base}{path}", headers=root, json=body).raise_for_status()


def mint_keys(base: str, root: dict[str, str], count: int) -> list[str]:
    keys = []
    for number in range(count):
        minted = httpx.post(f"{base}/api/profile/api-keys", headers=root,
                            json={"name": f"bench-{number}"})
        minted.raise_for_status()
        keys.append(minted.json()["key"])
    return keys


def new_encryption_key() -> str:
    return secrets.token_hex(32)
