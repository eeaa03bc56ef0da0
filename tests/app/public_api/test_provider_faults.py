"""A provider that is down or slow, as ``/v1`` callers see it: 502 when it cannot be
reached or fails, 504 when it does not answer in time, streamed or not, always in the
OpenAI error shape, and the usage of each failed call recorded as an error."""

from __future__ import annotations

import json
import logging
import re

import httpx
import pytest

from app.log_format import JsonFormatter, RequestIdFilter
from app.tables import UsageEvent
from tests.fakes.upstream import Behaviour
from tests.support.http import free_socket

pytestmark = pytest.mark.anyio

CHAT = {"model": "fake-small", "messages": [{"role": "user", "content": "x"}]}


async def _ask(v1, stream: bool) -> httpx.Response:
    return await v1.api.post("/v1/chat/completions", json={**CHAT, "stream": stream},
                             headers={"Authorization": f"Bearer {v1.key}"})


def _openai_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code and error["type"] == "server_error" and error["message"]
    assert error["param"] is None


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_provider_nobody_answers_for_is_502(v1, services, stream):
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
async def test_a_provider_that_does_not_answer_in_time_is_504(v1, services, stream):
    v1.services.client.timeouts = type(v1.services.client.timeouts)(connect=2, read=0.3)
    v1.upstream.behaviour = Behaviour(first_byte_delay=2)
    _openai_error(await _ask(v1, stream), 504, "upstream_timeout")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_provider_that_fails_is_502(v1, services, stream):
    v1.upstream.behaviour = Behaviour(status=503)
    _openai_error(await _ask(v1, stream), 502, "upstream_error")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_refused_key_is_named_as_the_service_s_or_the_caller_s_own(v1, services,
                                                                          stream):
    v1.upstream.behaviour = Behaviour(status=401, error_message="Incorrect API key provided")
    refused = await _ask(v1, stream)
    _openai_error(refused, 502, "upstream_error")
    assert "refused the service's credentials (HTTP 401)" in refused.json()["error"]["message"]

    providers = await services.providers.list()
    stored = await v1.api.post("/api/profile/provider-keys", headers=v1.user, json={
        "provider_id": str(providers[0]["id"]), "api_key": "devs-own-key"})
    assert stored.status_code == 201, stored.text
    refused = await _ask(v1, stream)
    _openai_error(refused, 502, "upstream_error")
    message = refused.json()["error"]["message"]
    assert "refused your own key for it (HTTP 401)" in message
    assert "Profile, Provider keys" in message and "devs-own-key" not in refused.text


# What a client library says that a user should never read: exception class names,
# aiohttp's connection key and its message fields, errno, the upstream's address.
_INTERNALS = re.compile(r"[A-Z][a-z]+(?:[A-Z][a-z]+)*(?:Error|Exception)\b|ssl:default|"
                        r"message=|Errno|127\.0\.0\.1|Cannot connect")


def _plain(text: str) -> None:
    assert not _INTERNALS.search(text), text


async def _point_the_provider_at(v1, services, base_url: str) -> None:
    admin = await v1.api.as_new_user(services, "root@example.org", role="admin")
    providers = (await v1.api.get("/api/admin/providers", headers=admin)).json()["data"]
    changed = await v1.api.patch(f"/api/admin/providers/{providers[0]['id']}", headers=admin,
                                 json={"base_url": base_url})
    assert changed.status_code == 200, changed.text


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_provider_that_cannot_be_reached_is_told_in_words(v1, services, stream,
                                                                  caplog):
    closed = free_socket()
    port = closed.getsockname()[1]
    closed.close()
    await _point_the_provider_at(v1, services, f"http://127.0.0.1:{port}/v1")
    caplog.handler.addFilter(RequestIdFilter())  # as configure_logging does
    with caplog.at_level(logging.WARNING, logger="svc.providers"):
        answer = await _ask(v1, stream)
    assert answer.status_code == 502
    assert answer.json()["error"]["message"] == "fake: the provider could not be reached"
    _plain(answer.text)
    # the detail is in the log, under the id the caller was given
    lines = [json.loads(JsonFormatter().format(record)) for record in caplog.records
             if record.name == "svc.providers"]
    assert [line["request_id"] for line in lines] == [answer.headers["x-request-id"]]
    assert "ConnectFailed" in lines[0]["detail"]


@pytest.mark.parametrize("interrupt", ["drop", "drop_mid_event"])
async def test_an_answer_cut_off_midway_is_told_in_words(v1, interrupt):
    v1.upstream.behaviour = Behaviour(chunks=6, interrupt_after=2, interrupt=interrupt)
    answer = await _ask(v1, stream=True)
    assert answer.status_code == 200  # the error comes as the stream's last frame
    frames = [line for line in answer.text.splitlines() if '"error"' in line]
    assert len(frames) == 1 and "the provider's answer was cut off" in frames[0]
    _plain(answer.text)


@pytest.mark.parametrize("status", [400, 401, 500])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_no_part_of_the_provider_key_is_echoed(v1, status, stream):
    # The instance's key is "instance-key": providers quote it cut or masked.
    for echo in ("inst...-key", "instance-k", "instance-****", "****e-key"):
        v1.upstream.behaviour = Behaviour(status=status,
                                          error_message=f"Incorrect API key provided: {echo}")
        answer = await _ask(v1, stream)
        assert answer.status_code == (400 if status == 400 else 502), answer.text
        assert echo not in answer.text and "instance" not in answer.text
        assert "-key" not in answer.text.replace("provider key", "")
    v1.upstream.behaviour = Behaviour(chunks=4, interrupt_after=1, interrupt="error",
                                      error_message="Incorrect API key provided: inst...-key")
    mid_stream = await _ask(v1, stream=True)
    assert "[provider key]" in mid_stream.text and "inst..." not in mid_stream.text
