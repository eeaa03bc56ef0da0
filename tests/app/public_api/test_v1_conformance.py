"""The /v1 API as its clients meet it: real ``svc serve`` processes, the official openai
SDK (sync and async), and raw HTTP for headers, SSE framing and CORS.

One deployment for the whole module: two ``svc serve`` processes on one PostgreSQL
database (as a scaled-out install runs), the loopback OpenAI-compatible upstream as a
process of its own, a provider pointing at it and one pointing at a closed port. Each
test mints its own key, so the per-key limit of one never touches another.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import openai
import pytest

from tests.support.listener import free_port
from tests.support.api_users import first_admin, user_with_key
from tests.support.processes import printed_once_serving, serve_logged, stop_process

pytestmark = pytest.mark.e2e

ANSWER = "The quick brown fox jumps over the lazy dog."
PREFLIGHT = {"Origin": "https://tool.example", "Access-Control-Request-Method": "POST",
             "Access-Control-Request-Headers": "authorization, content-type, x-stainless-lang"}


def _serve(dsn: str, data_dir: Path, port: int, key: str) -> tuple[subprocess.Popen, Path]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC__")}
    env.update(SVC__DATABASE__URL=dsn, SVC__STORAGE__DATA_DIR=str(data_dir),
               SVC__SERVER__PORT=str(port), SVC__MESSAGE_ENCRYPTION_KEY=key,
               SVC__SERVER__WORKERS="1")
    data_dir.mkdir(parents=True)
    log = data_dir / "out.log"
    return serve_logged(["serve"], env, log), log


@dataclass
class Deployment:
    servers: list[str]  #: base URLs of the two processes
    root: dict[str, str]  #: the first superadmin's session on servers[0]
    agents: dict[str, str] = field(default_factory=dict)
    _users: int = 0

    def caller(self) -> tuple[str, dict[str, str]]:
        """A new user's key and session (on servers[0])."""
        self._users += 1
        return user_with_key(self.servers[0], self.root, f"dev{self._users}@example.org",
                             "conformance")

    def agent_of(self, session: dict[str, str]) -> str:
        made = httpx.post(f"{self.servers[0]}/api/agents", headers=session,
                          json={"name": "Desk", "model": "fake-small"})
        assert made.status_code == 201, made.text
        return f"agent/{made.json()['id']}"

    def setting(self, key: str, value: object) -> None:
        """Write a runtime setting and wait until both processes read it (each caches
        its settings for a second)."""
        written = httpx.put(f"{self.servers[0]}/api/admin/settings/{key}", headers=self.root,
                            json={"value": value})
        assert written.status_code == 200, written.text
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            seen = [httpx.get(f"{base}/api/admin/settings/{key}", headers=self.root)
                    for base in self.servers]
            if all(answer.json().get("value") == value for answer in seen):
                return
            time.sleep(0.1)
        raise AssertionError(f"{key} not seen by both servers")


@pytest.fixture(scope="module")
def deployment(postgres, tmp_path_factory) -> Iterator[Deployment]:
    name = f"svc_conformance_{os.getpid()}"
    dsn = asyncio.run(postgres.clone_template(name))
    workdir = tmp_path_factory.mktemp("v1")
    upstream = subprocess.Popen([sys.executable, "-m", "tests.fakes.upstream", "--port", "0",
                                 "--text", ANSWER, "--chunks", "4"],
                                stdout=subprocess.PIPE, text=True)
    processes = [upstream]
    try:
        upstream_port = int(upstream.stdout.readline().split()[-1])
        key = secrets.token_hex(32)
        first, first_log = _serve(dsn, workdir / "a", free_port(), key)
        processes.append(first)
        printed = printed_once_serving(first, first_log)
        second, second_log = _serve(dsn, workdir / "b", free_port(), key)
        processes.append(second)
        servers = [re.search(r"svc is serving on (\S+)", text).group(1) for text in
                   (printed, printed_once_serving(second, second_log))]
        root = first_admin(servers[0], printed)
        for provider, base_url, model in (
                ("fake", f"http://127.0.0.1:{upstream_port}/v1", "fake-small"),
                ("gone", f"http://127.0.0.1:{free_port()}/v1", "gone-model")):
            made = httpx.post(f"{servers[0]}/api/admin/providers", headers=root, json={
                "name": provider, "base_url": base_url, "api_key": "sk-up", "models": [model]})
            assert made.status_code == 201, made.text
        yield Deployment(servers, root)
    finally:
        for process in reversed(processes):
            stop_process(process)
        asyncio.run(postgres.drop(name))


def sdk(deployment: Deployment, key: str, server: int = 0) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{deployment.servers[server]}/v1", api_key=key,
                         max_retries=0)


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


# -- the SDK -------------------------------------------------------------------------------


def test_sync_sdk_lists_retrieves_creates_and_streams(deployment):
    key, session = deployment.caller()
    agent = deployment.agent_of(session)
    client = sdk(deployment, key)
    listed = [model.id for model in client.models.list()]
    assert {"fake-small", "gone-model", "local", agent} <= set(listed)
    for model_id in listed:
        model = client.models.retrieve(model_id)
        assert model.id == model_id and isinstance(model.created, int)
    completion = client.chat.completions.create(model="fake-small", messages=user("Hi"))
    assert completion.choices[0].message.content == ANSWER
    assert completion.usage.completion_tokens > 0
    chunks = list(client.chat.completions.create(
        model="fake-small", messages=user("Hi"), stream=True,
        stream_options={"include_usage": True}))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == ANSWER
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0
    assert all(c.usage is None for c in chunks[:-1])
    without_usage = list(client.chat.completions.create(
        model="fake-small", messages=user("Hi"), stream=True))
    assert all(c.choices and c.usage is None for c in without_usage)


@pytest.mark.anyio
async def test_async_sdk_lists_retrieves_creates_and_streams_an_agent(deployment):
    key, session = deployment.caller()
    agent = deployment.agent_of(session)
    async with openai.AsyncOpenAI(base_url=f"{deployment.servers[1]}/v1", api_key=key,
                                  max_retries=0) as client:
        assert agent in [model.id async for model in client.models.list()]
        assert (await client.models.retrieve(agent)).id == agent
        first = await client.chat.completions.with_raw_response.create(
            model=agent, messages=user("When do you open?"))
        chat_id = first.headers["x-service-chat-id"]
        whole = first.parse().choices[0].message.content
        assert whole == ANSWER
        stream = await client.chat.completions.create(
            model=agent, messages=user("And on Sunday?"), stream=True,
            stream_options={"include_usage": True}, extra_headers={"X-Service-Chat-Id": chat_id})
        chunks = [chunk async for chunk in stream]
        assert stream.response.headers["x-service-chat-id"] == chat_id
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == whole
    assert chunks[-1].usage.total_tokens > 0
    kept = httpx.get(f"{deployment.servers[0]}/api/chats/{chat_id}", headers=session).json()
    assert [m["content"] for m in kept["messages"]] == [
        "When do you open?", ANSWER, "And on Sunday?", ANSWER]


def _refusals(deployment: Deployment, agent: str):
    """(what the client does, the SDK's class, status, code, param)."""
    messages = user("Hi")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    return [
        (lambda c: c.with_options(api_key="sk-svc-not-a-key").models.list(),
         openai.AuthenticationError, 401, "invalid_api_key", None),
        (lambda c: c.chat.completions.create(model="no-such-model", messages=messages),
         openai.NotFoundError, 404, "model_not_found", "model"),
        (lambda c: c.models.retrieve("agent/00000000-0000-0000-0000-000000000000"),
         openai.NotFoundError, 404, "model_not_found", "model"),
        (lambda c: c.chat.completions.create(model="fake-small", messages=messages, n=2),
         openai.BadRequestError, 400, "invalid_request_error", "n"),
        (lambda c: c.chat.completions.create(model="fake-small", messages=messages, tools=tools),
         openai.BadRequestError, 400, "tools_not_allowed", "tools"),
        (lambda c: c.chat.completions.create(model="fake-small", messages=[
            {"role": "robot", "content": "Hi"}]),
         openai.BadRequestError, 400, "invalid_request_error", "messages[0].role"),
        (lambda c: c.chat.completions.create(model=agent, messages=messages, extra_headers={
            "X-Service-Chat-Id": "00000000-0000-0000-0000-000000000000"}),
         openai.NotFoundError, 404, "chat_not_found", None),
        (lambda c: c.chat.completions.create(model="gone-model", messages=messages),
         openai.InternalServerError, 502, "upstream_error", None),
    ]


def test_each_refusal_is_the_sdk_error_class_with_its_code_and_param(deployment):
    key, session = deployment.caller()
    client = sdk(deployment, key)
    for call, kind, status, code, param in _refusals(deployment, deployment.agent_of(session)):
        with pytest.raises(kind) as refused:
            call(client)
        error = refused.value
        assert (error.status_code, error.code, error.param) == (status, code, param), error
        assert error.type and error.message and error.request_id


def test_the_rate_limit_holds_across_two_processes(deployment):
    deployment.setting("api.rate_per_min", 5)
    try:
        key, _ = deployment.caller()
        bad = {"model": "fake-small", "n": 2, "messages": user("Hi")}
        good = {"model": "fake-small", "messages": user("Hi")}
        headers = {"Authorization": f"Bearer {key}"}
        for base in deployment.servers:  # refused requests use up nothing
            assert httpx.post(f"{base}/v1/chat/completions", headers=headers,
                              json=bad).status_code == 400

        async def burst() -> list[httpx.Response]:
            async with httpx.AsyncClient(timeout=30) as client:
                return await asyncio.gather(*[
                    client.post(f"{deployment.servers[i % 2]}/v1/chat/completions",
                                headers=headers, json=good) for i in range(12)])

        answers = asyncio.run(burst())
        assert sorted(a.status_code for a in answers) == [200] * 5 + [429] * 7
        refused = next(a for a in answers if a.status_code == 429)
        assert int(refused.headers["retry-after"]) >= 1
        assert int(refused.headers["retry-after-ms"]) <= 12_000  # one request a 12 s
        assert refused.headers["x-ratelimit-remaining-requests"] == "0"
        assert re.fullmatch(r"(\d+m)?[\d.]+m?s", refused.headers["x-ratelimit-reset-requests"])
        with pytest.raises(openai.RateLimitError) as limited:
            sdk(deployment, key, 1).chat.completions.create(**good)
        assert (limited.value.code, limited.value.param) == ("rate_limit_exceeded", None)
    finally:
        deployment.setting("api.rate_per_min", 60)


# -- raw HTTP ---------------------------------------------------------------------------


def test_every_response_carries_a_request_id(deployment):
    key, _ = deployment.caller()
    base = deployment.servers[0]
    bearer = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, timeout=30) as client:
        answers = [
            client.get("/v1/models", headers=bearer),
            client.get("/v1/models"),
            client.get("/v1/no-such-path", headers=bearer),
            client.post("/v1/chat/completions", headers=bearer, content=b"{not json"),
            client.options("/v1/chat/completions", headers=PREFLIGHT),
        ]
        with client.stream("POST", "/v1/chat/completions", headers=bearer, json={
                "model": "fake-small", "stream": True, "messages": user("Hi")}) as streamed:
            streamed.read()
        answers.append(streamed)
        given = client.get("/v1/models", headers={**bearer, "x-request-id": "trace-42"})
    assert all(re.fullmatch(r"[0-9a-f]{32}", a.headers["x-request-id"]) for a in answers)
    assert len({a.headers["x-request-id"] for a in answers}) == len(answers)
    assert given.headers["x-request-id"] == "trace-42"


def _events(body: bytes) -> list[bytes]:
    assert body.endswith(b"\n\n")
    return body[:-2].split(b"\n\n")


def test_sse_framing_of_passthrough_and_agent_streams(deployment):
    key, session = deployment.caller()
    agent = deployment.agent_of(session)
    for model in ("fake-small", agent, "local"):
        with httpx.stream("POST", f"{deployment.servers[0]}/v1/chat/completions", json={
                "model": model, "stream": True, "messages": user("Hi"),
                "stream_options": {"include_usage": True}},
                headers={"Authorization": f"Bearer {key}"}, timeout=30) as response:
            body = response.read()
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-cache"
        events = _events(body)
        assert events[-1] == b"data: [DONE]"
        assert all(e.startswith(b"data: {") and b"\n" not in e for e in events[:-1]
                   if not e.startswith(b":")), body
        assert ("x-service-chat-id" in response.headers) == model.startswith("agent/")


def test_cors_answers_only_when_switched_on(deployment):
    key, _ = deployment.caller()
    base = deployment.servers[0]
    asked = {"Authorization": f"Bearer {key}", "Origin": "https://tool.example"}
    off = [httpx.options(f"{base}/v1/chat/completions", headers=PREFLIGHT),
           httpx.get(f"{base}/v1/models", headers=asked)]
    assert all(not any(h.startswith("access-control-") for h in a.headers) for a in off)
    deployment.setting("api.cors_allow_all", True)
    try:
        preflight = httpx.options(f"{base}/v1/chat/completions", headers=PREFLIGHT)
        assert preflight.status_code == 204  # answered without a key
        assert preflight.headers["access-control-allow-origin"] == "https://tool.example"
        assert (preflight.headers["access-control-allow-headers"]
                == PREFLIGHT["Access-Control-Request-Headers"])
        assert "POST" in preflight.headers["access-control-allow-methods"]
        answer = httpx.get(f"{base}/v1/models", headers=asked)
        exposed = answer.headers["access-control-expose-headers"].lower()
        assert {"x-service-chat-id", "x-request-id", "x-ratelimit-remaining-requests",
                "retry-after"} <= {name.strip() for name in exposed.split(",")}
        refused = httpx.get(f"{base}/v1/models", headers={"Origin": "https://tool.example"})
        assert refused.status_code == 401 and refused.headers["access-control-allow-origin"]
    finally:
        deployment.setting("api.cors_allow_all", False)


def test_a_body_over_the_limit_is_refused_before_it_is_read(deployment):
    key, _ = deployment.caller()
    host, port = deployment.servers[0].removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as raw:
        raw.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    b"Authorization: Bearer " + key.encode() + b"\r\n"
                    b"Content-Type: application/json\r\nContent-Length: 900000000\r\n\r\n{")
        answer = b""
        while b"payload_too_large" not in answer and (data := raw.recv(65536)):
            answer += data
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and b"x-request-id" in head.lower()
    assert b'"code":"payload_too_large"' in body


def test_revoking_a_key_on_one_process_refuses_it_at_once_on_the_other(deployment):
    key, session = deployment.caller()
    clients = [sdk(deployment, key, server) for server in (0, 1)]
    for client in clients:  # each process now keeps the key's identity
        assert client.models.list().data
    listed = httpx.get(f"{deployment.servers[0]}/api/profile/api-keys", headers=session)
    revoked = httpx.delete(f"{deployment.servers[0]}/api/profile/api-keys/"
                           f"{listed.json()['data'][0]['id']}", headers=session)
    assert revoked.status_code == 200, revoked.text
    for client in reversed(clients):  # the other process first, with no pause
        with pytest.raises(openai.AuthenticationError) as refused:
            client.models.list()
        assert refused.value.code == "invalid_api_key"


# -- agent calls as OpenAI answers them ---------------------------------------------------

LEAFLET = "Parking is free behind the building. The clinic opens at nine on weekdays."
SCHEMA = {"type": "json_schema", "json_schema": {"name": "reply", "strict": True, "schema": {
    "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
    "additionalProperties": False}}}


def library_agent(deployment: Deployment, session: dict[str, str], model: str) -> str:
    base = deployment.servers[0]
    library = httpx.post(f"{base}/api/libraries", headers=session, json={"name": "Leaflets"})
    added = httpx.post(f"{base}/api/libraries/{library.json()['id']}/documents", headers=session,
                       json={"title": "Leaflet", "content": LEAFLET})
    assert added.status_code == 201, added.text
    made = httpx.post(f"{base}/api/agents", headers=session, json={
        "name": f"Desk on {model}", "model": model, "library_ids": [library.json()["id"]]})
    assert made.status_code == 201, made.text
    return f"agent/{made.json()['id']}"


def test_response_format_is_honoured_by_a_provider_agent_and_refused_by_a_local_one(deployment):
    key, session = deployment.caller()
    client = sdk(deployment, key)
    agent = library_agent(deployment, session, "fake-small")
    completion = client.chat.completions.create(model=agent, messages=user("Where to park?"),
                                                response_format=SCHEMA)
    message = completion.choices[0].message
    assert json.loads(message.content) == {"text": ANSWER}
    assert [a.type for a in message.annotations] == ["url_citation"]
    assert message.annotations[0].url_citation.url.startswith(deployment.servers[0])
    chunks = list(client.chat.completions.create(
        model=agent, messages=user("Where to park?"), stream=True,
        response_format={"type": "json_object"}))
    assert json.loads("".join(c.choices[0].delta.content or "" for c in chunks)) == {
        "answer": ANSWER}
    local_agent = library_agent(deployment, session, "local")
    for model in (local_agent, "local"):
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(model=model, messages=user("Where to park?"),
                                           response_format=SCHEMA)
        assert refused.value.param == "response_format"


@pytest.mark.anyio
async def test_generation_parameters_fingerprints_and_links_through_the_async_sdk(deployment):
    key, session = deployment.caller()
    agent = library_agent(deployment, session, "local")
    async with openai.AsyncOpenAI(base_url=f"{deployment.servers[1]}/v1", api_key=key,
                                  max_retries=0) as client:
        whole = await client.chat.completions.create(model=agent,
                                                     messages=user("Where is parking?"))
        one = await client.chat.completions.create(model=agent, messages=user("Where is parking?"),
                                                   max_tokens=1)
        stream = await client.chat.completions.create(
            model=agent, messages=user("Where is parking?"), stream=True, stop=[" behind"],
            temperature=0, seed=1, user="conformance")
        chunks = [chunk async for chunk in stream]
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(model="local", messages=user("Hi"),
                                                 temperature=0.9)
    assert (one.choices[0].message.content, one.choices[0].finish_reason) == ("Parking", "length")
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Parking is free"
    assert refused.value.param == "temperature"
    message = whole.choices[0].message
    assert message.refusal is None and whole.system_fingerprint.startswith("fp_")
    assert {c.system_fingerprint for c in chunks} == {whole.system_fingerprint}
    # No server.public_url is configured: links point where the request went.
    assert message.annotations[0].url_citation.url.startswith(f"{deployment.servers[1]}/api/")


def test_a_stream_that_fails_before_its_first_byte_is_an_http_status(deployment):
    key, session = deployment.caller()
    client = sdk(deployment, key)
    gone_agent = httpx.post(f"{deployment.servers[0]}/api/agents", headers=session,
                            json={"name": "Gone", "model": "gone-model"}).json()["id"]
    for model in ("gone-model", f"agent/{gone_agent}"):
        with pytest.raises(openai.InternalServerError) as failed:
            client.chat.completions.create(model=model, messages=user("Hi"), stream=True)
        assert failed.value.status_code == 502 and failed.value.code == "upstream_error"
        assert failed.value.response.headers["content-type"].startswith("application/json")
