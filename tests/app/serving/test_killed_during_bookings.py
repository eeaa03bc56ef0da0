"""A server process killed (SIGKILL) while callers book appointments, then started
again on the same database: no slot is booked twice, and every booking that was
answered 201 is still there (spec: telephony.md "Appointment" — "two callers cannot
take one slot").

``svc serve`` runs as a process of its own on the test's database; twelve clients book
the same few slots as fast as they can, and the process is killed once some bookings
have been answered, with others in flight.
"""

from __future__ import annotations

import collections
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import httpx
import pytest

from tests.support.http import free_socket
from tests.support.processes import stop_process

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[3]
EVERY_DAY = [{"weekday": day, "opens_minute": 0, "closes_minute": 1440} for day in range(7)]
DIARY = {"timezone": "UTC", "slot_minutes": 30, "lead_minutes": 0, "horizon_days": 7,
         "enabled": True, "hours": EVERY_DAY}


class Served:
    """One ``svc serve`` on ``dsn``; ``printed`` holds what it wrote until serving."""

    def __init__(self, dsn: str, data_dir: Path, key: str) -> None:
        sock = free_socket()
        self.port = sock.getsockname()[1]
        sock.close()
        env = {k: v for k, v in os.environ.items() if not k.startswith("SVC__")}
        env.update(SVC__DATABASE__URL=dsn, SVC__STORAGE__DATA_DIR=str(data_dir),
                   SVC__SERVER__PORT=str(self.port), SVC__MESSAGE_ENCRYPTION_KEY=key,
                   SVC__SERVER__WORKERS="1")
        self.process = subprocess.Popen([sys.executable, "-m", "app.cli", "serve"], cwd=ROOT,
                                        env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
        self.printed = ""
        for line in self.process.stdout:
            self.printed += line
            if line.startswith("svc is serving"):
                break
        else:
            raise AssertionError("svc exited before serving:\n" + self.printed)
        # Keep reading so the process never blocks on a full pipe.
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


async def _signed_in(api: httpx.AsyncClient, email: str, password: str) -> dict[str, str]:
    login = await api.post("/api/auth/login", json={"email": email, "password": password})
    assert login.status_code == 200, login.text
    return {"Authorization": f"Bearer {login.json()['token']}"}


async def test_killed_while_booking_no_slot_is_taken_twice_and_none_is_lost(database,
                                                                           tmp_path):
    key = secrets.token_hex(32)
    first = Served(database, tmp_path / "data", key)
    try:
        password = re.search(r"one-time password (\S+)", first.printed).group(1)
        async with httpx.AsyncClient(base_url=first.base, timeout=30) as api:
            root = await _signed_in(api, "admin@localhost", password)
            # The one-time password is changed before anything else is allowed.
            changed = await api.post("/api/me/password", headers=root, json={
                "current_password": password, "new_password": secrets.token_urlsafe(15)})
            assert changed.status_code == 204, changed.text
            created = await api.post("/api/admin/users", headers=root, json={
                "email": "ann@example.org", "password": "correct horse battery staple"})
            assert created.status_code == 201, created.text
            ann = await _signed_in(api, "ann@example.org", "correct horse battery staple")
            assert (await api.put("/api/diary", headers=ann, json=DIARY)).status_code == 200
            slots = [slot["starts_at"] for slot in
                     (await api.get("/api/diary/slots", headers=ann)).json()["data"][:6]]
        answered: list[dict] = []
        statuses: collections.Counter = collections.Counter()

        async def caller(number: int) -> None:
            async with httpx.AsyncClient(base_url=first.base, timeout=30) as client:
                for attempt in range(40):
                    starts_at = slots[(number + attempt) % len(slots)]
                    try:
                        booked = await client.post("/api/diary/appointments", headers=ann,
                                                   json={"starts_at": starts_at,
                                                         "caller_name": f"Caller {number}",
                                                         "subject": "Viewing"})
                    except httpx.TransportError:
                        statuses["cut"] += 1
                        return  # the server is gone
                    statuses[booked.status_code] += 1
                    if booked.status_code == 201:
                        answered.append(booked.json())

        async with anyio.create_task_group() as callers:
            for number in range(12):
                callers.start_soon(caller, number)
            while statuses[201] < 3 or statuses[409] < 3:
                await anyio.sleep(0.01)
            first.process.send_signal(signal.SIGKILL)
        assert first.process.wait() == -signal.SIGKILL
    finally:
        stop_process(first.process)

    assert set(statuses) <= {201, 409, "cut"}, statuses
    again = Served(database, tmp_path / "data", key)
    try:
        async with httpx.AsyncClient(base_url=again.base, timeout=30) as api:
            ann = await _signed_in(api, "ann@example.org", "correct horse battery staple")
            listed = (await api.get("/api/diary/appointments", headers=ann)).json()["data"]
            live = [row for row in listed if row["state"] != "cancelled"]
            # Every slot has at most one live appointment...
            starts = collections.Counter(row["starts_at"] for row in live)
            assert max(starts.values()) == 1, starts
            # ...and every booking answered 201 before the kill is among them.
            assert {row["id"] for row in answered} <= {row["id"] for row in live}
            # The restarted server books what is left, and refuses what is taken.
            free = [s for s in slots if s not in starts]
            taken = next(iter(starts))
            for starts_at, expected in ([(free[0], 201)] if free else []) + [(taken, 409)]:
                booked = await api.post("/api/diary/appointments", headers=ann, json={
                    "starts_at": starts_at, "caller_name": "Late", "subject": "Viewing"})
                assert booked.status_code == expected, booked.text
    finally:
        stop_process(again.process)
