"""The ``/v1`` benchmark's apparatus: the lean upstream answers the very bytes the test
fake does; the load client times answers, keeps its connection, opens another when
the target closes it, and refuses a status other than 200; a cell starts only once
the processes measured are quiet, and each round begins with another target."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import httpx
import pytest

from benchmarks.lean_upstream import Answers, serve
from benchmarks.load_client import LoadConnection, Refused, request_bytes
from benchmarks.v1_passthrough import round_order, settle
from tests.fakes.upstream import Behaviour, FakeUpstream

pytestmark = pytest.mark.anyio

BEHAVIOUR = Behaviour(text="Foxes live in dens and hunt at dusk.", chunks=5)
ASKED = {"model": "fake-small", "messages": [{"role": "user", "content": "Tell me of foxes"}]}
STREAMED = {**ASKED, "stream": True, "stream_options": {"include_usage": True}}


class _Lean:
    """The lean upstream served in this process on a free port."""

    async def __aenter__(self) -> _Lean:
        self.answers = Answers(BEHAVIOUR)
        loop = asyncio.get_running_loop()
        self._said: asyncio.Future[int] = loop.create_future()
        self._task = loop.create_task(serve(self.answers, 0, self._said.set_result))
        self.port = await asyncio.wait_for(self._said, 10)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


async def _post(base_url: str, body: dict) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(f"{base_url}/chat/completions", json=body)


async def test_the_lean_upstream_answers_the_bytes_the_fake_does():
    async with FakeUpstream(behaviour=BEHAVIOUR) as fake, _Lean() as lean:
        for body in (ASKED, STREAMED):
            ours, theirs = await _post(lean.base_url, body), await _post(fake.base_url, body)
            assert ours.status_code == theirs.status_code == 200
            assert ours.headers["content-type"] in theirs.headers["content-type"]
            if body is STREAMED:
                assert ours.content == fake.sent
                assert ours.headers["transfer-encoding"] == "chunked"
            else:
                assert ours.json() == theirs.json()


async def test_the_lean_upstream_refuses_what_it_cannot_answer():
    async with _Lean() as lean, httpx.AsyncClient() as client:
        missing = await client.post(f"{lean.base_url}/embeddings", json=ASKED)
        garbled = await client.post(f"{lean.base_url}/chat/completions", content=b"[1")
        models = await client.get(f"{lean.base_url}/models")
    assert missing.status_code == 404 and garbled.status_code == 400
    assert [model["id"] for model in models.json()["data"]] == list(BEHAVIOUR.models)


async def test_the_load_client_times_answers_on_one_kept_connection():
    async with _Lean() as lean:
        url = f"{lean.base_url}/chat/completions"
        plain = LoadConnection("127.0.0.1", lean.port, request_bytes(url, "sk", ASKED))
        streamed = LoadConnection("127.0.0.1", lean.port, request_bytes(url, "sk", STREAMED))
        try:
            for connection in (plain, streamed):
                answers = [await connection.exchange() for _ in range(3)]
                assert connection.opened == 1  # the same connection, kept alive
                assert all(0 < first <= took for took, first in answers)
        finally:
            plain.close()
            streamed.close()


async def test_the_load_client_opens_a_new_connection_when_the_target_closes_one():
    served: list[int] = []

    async def answer_once_then_close(reader, writer):
        served.append(1)
        await reader.readuntil(b"\r\n\r\n")
        body = json.dumps({"ok": True}).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
                     % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer_once_then_close, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        connection = LoadConnection("127.0.0.1", port, request_bytes(
            f"http://127.0.0.1:{port}/v1/chat/completions", "sk", {}))
        for _ in range(3):
            await connection.exchange()
        connection.close()
    assert len(served) == connection.opened == 3


async def test_the_load_client_refuses_a_status_other_than_200():
    async with _Lean() as lean:
        connection = LoadConnection("127.0.0.1", lean.port, request_bytes(
            f"{lean.base_url}/nothing-here", "sk", ASKED))
        with pytest.raises(Refused, match="HTTP 404: .*no such route"):
            await connection.exchange()
        connection.close()


async def test_a_cell_waits_until_the_processes_measured_are_quiet(tmp_path):
    stop = tmp_path / "stop"
    busy = subprocess.Popen([sys.executable, "-c", (
        "import pathlib, time\n"
        f"while not pathlib.Path({str(stop)!r}).exists(): pass\n"
        "time.sleep(60)\n")])
    try:
        waiting = asyncio.ensure_future(settle([busy.pid], seconds=60))
        await asyncio.sleep(1.0)
        assert not waiting.done()  # the process still spins
        stop.touch()
        await asyncio.wait_for(waiting, 30)
    finally:
        busy.kill()
        busy.wait()


def test_each_round_begins_with_another_target_and_each_follows_each_other_once():
    targets = ["direct", "svc", "relay", "litellm"]
    rounds = [round_order(targets, index) for index in range(4)]  # type: ignore[arg-type]
    assert sorted(each[0] for each in rounds) == sorted(targets)
    assert all(sorted(each) == sorted(targets) for each in rounds)
    followed = [(each[place - 1], each[place]) for each in rounds for place in range(1, 4)]
    assert sorted(followed) == sorted((a, b) for a in targets for b in targets if a != b)
    assert round_order(targets, 4) == rounds[0]  # type: ignore[arg-type]
