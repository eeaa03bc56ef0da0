"""Chats over HTTP: create, list, open, delete, send (JSON and streamed), and who may."""

from __future__ import annotations

import json
import uuid
from typing import Any

import anyio
import pytest

from app.errors import NotFound
from app.services.access import reach_of_account
from app.tables import Agent, Chat, UsageEvent
from tests.app.services.test_pipeline import add_agent, add_fake_provider
from tests.fakes.upstream import Behaviour, ToolCall

pytestmark = pytest.mark.anyio


async def me(api, headers) -> Any:
    return (await api.get("/api/me", headers=headers)).json()


@pytest.fixture
async def ann(api, services, fake):
    """Ann's headers and the id of her agent, served by the fake upstream."""
    headers = await api.as_new_user(services, "ann@example.org")
    account = (await me(api, headers))["id"]
    await add_fake_provider(services, fake, uuid.UUID(account))
    agent = await add_agent(uuid.UUID(account), tools=["current_time"])
    return headers, str(agent)


async def new_chat(api, ann, **body) -> dict[str, Any]:
    headers, agent = ann
    response = await api.post("/api/chats", headers=headers, json={"agent_id": agent, **body})
    assert response.status_code == 201, response.text
    return response.json()


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


async def test_create_send_and_reopen_a_chat(api, fake, ann):
    headers, agent = ann
    chat = await new_chat(api, ann)
    assert chat["agent_id"] == agent and chat["source"] == "app"
    fake.behaviour = Behaviour(text="We open at eight.")
    sent = await api.post(f"/api/chats/{chat['id']}/messages", headers=headers,
                          json={"content": "When do you open?"})
    assert sent.status_code == 200, sent.text
    answer = sent.json()
    assert answer["message"] == {"role": "assistant", "content": "We open at eight.",
                                 "citations": []}
    assert answer["finish_reason"] == "stop" and answer["usage"]["completion_tokens"] == 4
    opened = (await api.get(f"/api/chats/{chat['id']}", headers=headers)).json()
    assert [(m["role"], m["content"]) for m in opened["messages"]] == [
        ("user", "When do you open?"), ("assistant", "We open at eight.")]
    assert opened["title"] == "When do you open?"  # named after its first question
    listed = (await api.get("/api/chats", headers=headers)).json()["data"]
    assert [c["id"] for c in listed] == [chat["id"]]


async def test_the_next_message_carries_the_conversation(api, fake, ann):
    headers, _ = ann
    chat = await new_chat(api, ann, title="Opening hours")
    for question in ("First?", "Second?"):
        await api.post(f"/api/chats/{chat['id']}/messages", headers=headers,
                       json={"content": question})
    last = fake.chat_requests()[-1]["messages"]
    assert [m["content"] for m in last[1:]] == [
        "First?", "Hello from the fake upstream.", "Second?"]


async def test_streamed_reply_sends_pipeline_events_as_sse(api, fake, ann):
    headers, _ = ann
    chat = await new_chat(api, ann)
    fake.script = [Behaviour(tool_call=ToolCall("current_time", '{"timezone": "UTC"}')),
                   Behaviour(text="It is late.", chunks=2)]
    response = await api.post(f"/api/chats/{chat['id']}/messages", headers=headers,
                              json={"content": "What time is it?", "stream": True})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    names = [name for name, _ in events]
    assert names[:3] == ["usage", "tool_started", "tool_finished"]
    assert names[-3:] == ["usage", "citations", "finished"] and names.count("delta") == 2
    assert events[2][1]["status"] == "ok"
    assert events[-1][1]["text"] == "It is late."
    stored = (await api.get(f"/api/chats/{chat['id']}", headers=headers)).json()["messages"]
    assert stored[-1]["content"] == "It is late."


async def test_an_upstream_failure_answers_its_status_and_keeps_only_the_question(
        api, fake, ann):
    headers, _ = ann
    chat = await new_chat(api, ann)
    fake.behaviour = Behaviour(status=500, error_message="overloaded")
    sent = await api.post(f"/api/chats/{chat['id']}/messages", headers=headers,
                          json={"content": "Hi"})
    assert sent.status_code == 502 and sent.json()["error"]["code"] == "upstream_error"
    streamed = await api.post(f"/api/chats/{chat['id']}/messages", headers=headers,
                              json={"content": "Hi again", "stream": True})
    assert [n for n, _ in sse_events(streamed.text)] == ["error", "finished"]
    stored = (await api.get(f"/api/chats/{chat['id']}", headers=headers)).json()["messages"]
    assert [m["role"] for m in stored] == ["user", "user"]


async def test_a_client_leaving_a_stream_stops_the_upstream_and_counts_it(
        api, services, fake, ann):
    headers, _ = ann
    chat = await new_chat(api, ann)
    fake.behaviour = Behaviour(chunks=6, interrupt_after=2, interrupt="stall")
    with anyio.fail_after(20):
        async with api.stream("POST", f"/api/chats/{chat['id']}/messages", headers=headers,
                              json={"content": "Hi", "stream": True}) as response:
            async for line in response.aiter_lines():
                if line.startswith("event: delta"):
                    break
        await fake.wait_open_connections(0)
        while not await UsageEvent.exists().where(UsageEvent.outcome == "client_disconnected"):
            await anyio.sleep(0.02)


async def test_bad_messages_are_refused(api, ann):
    headers, _ = ann
    chat = await new_chat(api, ann)
    url = f"/api/chats/{chat['id']}/messages"
    assert (await api.post(url, headers=headers, json={"content": "  "})).status_code == 422
    assert (await api.post(url, headers=headers, json={"content": 3})).status_code == 422
    unknown = await api.post("/api/chats", headers=headers, json={"agent_id": "nope"})
    assert unknown.status_code == 404


async def test_another_account_gets_404_for_everything(api, services, ann):
    chat = await new_chat(api, ann)
    bob = await api.as_new_user(services, "bob@example.org")
    url = f"/api/chats/{chat['id']}"
    assert (await api.get(url, headers=bob)).status_code == 404
    assert (await api.delete(url, headers=bob)).status_code == 404
    sent = await api.post(f"{url}/messages", headers=bob, json={"content": "Hi"})
    assert sent.status_code == 404
    taken = await api.post("/api/chats", headers=bob, json={"agent_id": ann[1]})
    assert taken.status_code == 404  # Ann's agent is not Bob's to talk to
    assert (await api.get("/api/chats", headers=bob)).json()["data"] == []
    assert (await api.get(url, headers=ann[0])).status_code == 200


async def test_an_administrator_may_open_and_delete_anyones_chat(api, services, ann):
    chat = await new_chat(api, ann)
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    url = f"/api/chats/{chat['id']}"
    assert (await api.get(url, headers=admin)).status_code == 200
    assert (await api.delete(url, headers=admin)).status_code == 204
    assert (await api.get(url, headers=ann[0])).status_code == 404


async def test_api_and_telephone_chats_stay_out_of_the_list_but_open_by_id(api, services, ann):
    headers, agent = ann
    account = (await me(api, headers))["id"]
    reach = await reach_of_account(uuid.UUID(account), False)
    api_chat = await services.chats.create_api_chat(reach, agent, api_key_id=None)
    call_chat = await services.chats.create(reach, agent, source="telephone")
    assert api_chat["source"] == "api"
    assert (await api.get("/api/chats", headers=headers)).json()["data"] == []
    for unlisted in (api_chat, call_chat):
        opened = await api.get(f"/api/chats/{unlisted['id']}", headers=headers)
        assert opened.status_code == 200


async def test_a_chat_is_renamed_and_a_blank_or_long_title_changes_nothing(api, services, ann):
    headers, _ = ann
    chat = await new_chat(api, ann, title="First")
    url = f"/api/chats/{chat['id']}"
    renamed = await api.patch(url, headers=headers, json={"title": "  Opening   hours "})
    assert renamed.status_code == 200 and renamed.json()["title"] == "Opening hours"
    for title in ("   ", "x" * 201):
        refused = await api.patch(url, headers=headers, json={"title": title})
        assert refused.status_code == 422 and refused.json()["error"]["field"] == "title"
    assert (await api.get(url, headers=headers)).json()["title"] == "Opening hours"
    bob = await api.as_new_user(services, "bob@example.org")
    assert (await api.patch(url, headers=bob, json={"title": "Mine"})).status_code == 404


async def test_history_and_send_for_the_api_are_owner_only(api, services, ann):
    headers, agent = ann
    owner = await reach_of_account(uuid.UUID((await me(api, headers))["id"]), False)
    chat = await services.chats.create_api_chat(owner, agent, api_key_id=None)
    await services.chats.append(chat["id"], "user", "Hello")
    assert await services.chats.history(owner, chat["id"]) == [
        {"role": "user", "content": "Hello"}]
    admin_row = await services.accounts.create("root@example.org", "correct horse battery",
                                               "admin")
    admin = await reach_of_account(admin_row["id"], True)
    with pytest.raises(NotFound):
        await services.chats.history(admin, chat["id"])
    with pytest.raises(NotFound):
        await services.chats.send(admin, chat["id"], "Hi", source="api", owner_only=True)


async def test_a_chat_whose_agent_is_gone_refuses_new_messages(api, ann):
    headers, agent = ann
    chat = await new_chat(api, ann)
    await Agent.delete().where(Agent.id == agent)
    assert (await Chat.select(Chat.agent_id).where(Chat.id == chat["id"]).first())[
        "agent_id"] is None
    sent = await api.post(f"/api/chats/{chat['id']}/messages", headers=headers,
                          json={"content": "Still there?"})
    assert sent.status_code == 409 and sent.json()["error"]["code"] == "agent_unavailable"
