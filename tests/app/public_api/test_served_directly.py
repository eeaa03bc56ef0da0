"""``svc serve`` answers ``POST /v1/chat/completions`` with its own protocol
(``app.http.direct_answers``), every outcome of it, and every other route through ASGI."""

from __future__ import annotations

import anyio
import pytest

from app.http import direct_answers

pytestmark = pytest.mark.anyio


def _recording_direct_answers(monkeypatch) -> list[int]:
    """The status of each response written by the direct path, from now on."""
    direct: list[int] = []
    written = direct_answers.write_response

    async def recorded(cycle, transport, response):
        direct.append(response.status)
        await written(cycle, transport, response)

    monkeypatch.setattr(direct_answers, "write_response", recorded)
    return direct


async def test_the_server_answers_chat_completions_directly_and_the_rest_through_asgi(
        v1, monkeypatch):
    direct = _recording_direct_answers(monkeypatch)
    answer = await v1.sdk.chat.completions.create(
        model="fake-small", messages=[{"role": "user", "content": "Hello"}])
    stream = await v1.sdk.chat.completions.create(
        model="fake-small", messages=[{"role": "user", "content": "Hello"}], stream=True)
    pieces = [chunk.choices[0].delta.content or "" async for chunk in stream
              if chunk.choices]
    assert "".join(pieces) == answer.choices[0].message.content
    refused = await v1.api.post("/v1/chat/completions", json={"model": "fake-small"},
                                headers={"Authorization": f"Bearer {v1.key}"})
    assert refused.status_code == 400 and refused.headers["x-request-id"]
    assert direct == [200, 200, 400]
    await v1.sdk.models.list()  # another route: BlackSheep's router, through ASGI
    assert direct == [200, 200, 400]


async def test_a_handler_failing_past_its_error_handlers_gets_a_500(v1, monkeypatch):
    async def failing(self, chain, request):
        raise RuntimeError("boom")

    monkeypatch.setattr("app.http.direct_routes.DirectRoutes.answer", failing)
    with anyio.fail_after(10):
        failed = await v1.api.post("/v1/chat/completions", json={},
                                   headers={"Authorization": f"Bearer {v1.key}"})
    assert failed.status_code == 500 and failed.text == "Internal Server Error"
    assert failed.headers["connection"] == "close"


async def test_the_front_door_still_refuses_a_session_cookie_on_another_host(v1, monkeypatch):
    direct = _recording_direct_answers(monkeypatch)
    refused = await v1.api.post(
        "/v1/chat/completions", json={"model": "fake-small", "messages": []},
        headers={"Authorization": f"Bearer {v1.key}", "Host": "rebound.example.net",
                 "Cookie": "svc_session=anything"})
    assert refused.status_code == 421 and refused.json()["error"]["code"] == "unknown_host"
    assert direct == []
