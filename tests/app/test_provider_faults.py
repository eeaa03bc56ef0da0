"""A provider that is down or slow, as ``/v1`` callers see it: 502 when it cannot be
reached or fails, 504 when it does not answer in time, streamed or not, always in the
OpenAI error shape, and the usage of each failed call recorded as an error."""

from __future__ import annotations

import httpx
import pytest

from app.tables import UsageEvent
from tests.app.test_public_api import v1  # noqa: F401  (fixture)
from tests.fakes.upstream import Behaviour
from tests.support.http import free_socket

pytestmark = pytest.mark.anyio

CHAT = {"model": "fake-small", "messages": [{"role": "user", "content": "x"}]}


async def _ask(v1, stream: bool) -> httpx.Response:  # noqa: F811
    return await v1.api.post("/v1/chat/completions", json={**CHAT, "stream": stream},
                             headers={"Authorization": f"Bearer {v1.key}"})


def _openai_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code and error["type"] == "server_error" and error["message"]
    assert error["param"] is None


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_provider_nobody_answers_for_is_502(v1, services, stream):  # noqa: F811
    closed = free_socket()
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there any more: the connection is refused
    admin = await v1.api.as_new_user(services, "root@example.org", role="admin")
    providers = (await v1.api.get("/api/admin/providers", headers=admin)).json()["data"]
    changed = await v1.api.patch(f"/api/admin/providers/{providers[0]['id']}", headers=admin,
                                 json={"base_url": f"http://127.0.0.1:{port}/v1"})
    assert changed.status_code == 200, changed.text
    _openai_error(await _ask(v1, stream), 502, "upstream_error")
    await services.usage.drain()
    assert [row["outcome"] for row in await UsageEvent.select(UsageEvent.outcome)] == ["error"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_provider_that_does_not_answer_in_time_is_504(v1, services, stream):  # noqa: F811
    v1.services.client.timeouts = type(v1.services.client.timeouts)(connect=2, read=0.3)
    v1.upstream.behaviour = Behaviour(first_byte_delay=2)
    _openai_error(await _ask(v1, stream), 504, "upstream_timeout")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_provider_that_fails_is_502(v1, services, stream):  # noqa: F811
    v1.upstream.behaviour = Behaviour(status=503)
    _openai_error(await _ask(v1, stream), 502, "upstream_error")
