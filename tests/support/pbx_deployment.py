"""A pbx line on a running deployment, and the calls it takes, over HTTP.

Shared by the tests that run real server processes (several workers, several hosts):
each passes ``everywhere(key, value)``, which writes a runtime setting and returns once
every process of its deployment reads it, and ``seen(path, check)``, which returns
once every process answers ``path`` with a body ``check`` accepts.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import httpx

from tests.app.telephony.deployment import CALLER, LINE_NUMBER, SHARED_SECRET

PBX = {"x-service-telephony-key": SHARED_SECRET}
_callers = itertools.count(10)

Everywhere = Callable[[str, object], None]
Seen = Callable[[str, Callable[[dict], bool]], None]


def answer_path() -> str:
    """The dialplan's question, each time from another caller (a caller ringing again
    at once is refused by the per-caller rate, which is not what is tested here)."""
    caller = f"{CALLER[1:-2]}{next(_callers):02d}"
    return f"/api/telephony/pbx/answer?from=%2B{caller}&to=%2B{LINE_NUMBER[1:]}"


def make_pbx_line(base: str, root: dict[str, str], everywhere: Everywhere,
                  seen: Seen) -> None:
    """A pbx line answered by an agent of the superadmin's (``root``)."""
    for key, value in (("features.telephony", True), ("features.voice", True),
                       ("features.voice_live", True), ("voice_live.tts_stream", True),
                       ("voice_live.tts_stream_url", "local")):
        everywhere(key, value)
    me = httpx.get(f"{base}/api/me", headers=root).json()["id"]
    agent = httpx.post(f"{base}/api/agents", headers=root,
                       json={"name": "Reception", "model": "local"})
    assert agent.status_code == 201, agent.text
    settings = httpx.put(f"{base}/api/admin/telephony", headers=root,
                         json={"provider": "pbx", "shared_secret": SHARED_SECRET})
    assert settings.status_code == 200, settings.text
    seen("/api/admin/telephony", lambda body: body.get("provider") == "pbx")
    line = httpx.post(f"{base}/api/admin/telephony/numbers", headers=root, json={
        "e164": LINE_NUMBER, "agent_id": agent.json()["id"], "owner_user_id": me,
        "provider": "pbx"})
    assert line.status_code == 201, line.text
    enabled = httpx.patch(f"{base}/api/admin/telephony/numbers/{line.json()['id']}",
                          headers=root, json={"enabled": True})
    assert enabled.status_code == 200, enabled.text


def calls(base: str, root: dict[str, str]) -> list[dict]:
    answer = httpx.get(f"{base}/api/admin/telephony/calls", headers=root)
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]


def media_started(base: str, root: dict[str, str]) -> int:
    return sum(call["media_started_at"] is not None for call in calls(base, root))


def all_ended(base: str, root: dict[str, str]) -> bool:
    return all(call["outcome"] != "in_progress" for call in calls(base, root))


def until(check, what: str, seconds: float = 30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(what)
