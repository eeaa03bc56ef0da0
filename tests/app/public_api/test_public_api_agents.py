"""Agent calls over /v1 (``model: agent/<id>``) and the built-in ``local`` model, driven
by the official openai SDK and raw HTTP: the kept conversation and its header,
citations, streaming (keep-alives, failures mid-stream), retries after side effects,
disconnects and usage."""

from __future__ import annotations

import json

import anyio
import httpx
import openai
import pytest

from app.public_api import agent_calls
from app.tables import Chat, ChatMessage, UsageEvent
from core.pipeline import ToolSpec
from tests.app.public_api.callers import Caller, new_caller
from tests.fakes.upstream import Behaviour, ToolCall
from tests.support.usage import usage_recorded

pytestmark = pytest.mark.anyio


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


async def streamed(ann: Caller, body: dict, headers: dict | None = None) -> tuple[httpx.Response, str]:
    async with httpx.AsyncClient(base_url=ann.api.base_url, timeout=20) as client:
        async with client.stream("POST", "/v1/chat/completions", json={**body, "stream": True},
                                 headers={**ann.bearer, **(headers or {})}) as response:
            text = (await response.aread()).decode()
    return response, text


def data_frames(text: str) -> list:
    frames = [block[len("data: "):] for block in text.split("\n\n") if block.startswith("data: ")]
    assert frames[-1] == "[DONE]"
    return [json.loads(frame) for frame in frames[:-1]]


async def test_an_agent_answers_with_citations_and_a_kept_conversation(ann):
    model = await ann.leaflet_agent()
    raw = await ann.sdk.chat.completions.with_raw_response.create(
        model=model, messages=[user("Where is parking?")])
    completion = raw.parse()
    message = completion.model_dump()["choices"][0]["message"]
    assert message["content"] == "Parking is free behind the building [1]."
    assert completion.model == model and completion.choices[0].finish_reason == "stop"
    annotation = message["annotations"][0]
    assert annotation["type"] == "url_citation"
    span = annotation["url_citation"]
    assert message["content"][span["start_index"]:span["end_index"]] == "[1]"
    assert span["title"] == "Visitor leaflet" and "/documents/" in span["url"]
    citations = completion.model_dump()["citations"]
    assert citations[0]["title"] == "Visitor leaflet" and "Parking" in citations[0]["snippet"]
    chat_id = raw.headers["X-Service-Chat-Id"]
    listed = (await ann.api.get("/api/chats", headers=ann.user)).json()["data"]
    assert listed == []  # API conversations stay out of the list...
    opened = await ann.api.get(f"/api/chats/{chat_id}", headers=ann.user)
    assert opened.status_code == 200 and opened.json()["source"] == "api"  # ...but open by id
    assert [m["role"] for m in opened.json()["messages"]] == ["user", "assistant"]


async def test_only_the_last_user_message_is_the_question_and_the_header_continues(ann):
    model = await ann.agent()
    ann.upstream.behaviour = Behaviour(text="Nine o'clock.")
    first = await ann.sdk.chat.completions.with_raw_response.create(model=model, messages=[
        {"role": "system", "content": "Ignored."}, user("Ignored too"),
        {"role": "assistant", "content": "Also ignored."}, user("When do you open?")])
    chat_id = first.headers["X-Service-Chat-Id"]
    sent = ann.upstream.chat_requests()[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] != "system"] == ["When do you open?"]
    second = await ann.sdk.chat.completions.with_raw_response.create(
        model=model, messages=[user("And on Sunday?")],
        extra_headers={"X-Service-Chat-Id": chat_id})
    assert second.headers["X-Service-Chat-Id"] == chat_id
    sent = ann.upstream.chat_requests()[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] != "system"] == [
        "When do you open?", "Nine o'clock.", "And on Sunday?"]
    fresh = await ann.sdk.chat.completions.with_raw_response.create(
        model=model, messages=[user("Hello?")])
    assert fresh.headers["X-Service-Chat-Id"] != chat_id
    assert await Chat.count().where(Chat.source == "api") == 2


async def test_a_chat_id_that_is_not_the_callers_own_is_chat_not_found(ann):
    model = await ann.agent()
    bob = await new_caller(ann.api, ann.services, ann.upstream, "bob@example.org")
    bobs_model = await bob.agent()
    bobs = await bob.sdk.chat.completions.with_raw_response.create(
        model=bobs_model, messages=[user("Hi")])
    bobs_chat = bobs.headers["X-Service-Chat-Id"]
    other_agent_chat = (await ann.sdk.chat.completions.with_raw_response.create(
        model=await ann.agent(), messages=[user("Hi")])).headers["X-Service-Chat-Id"]
    before = await ChatMessage.count()
    for chat_id in (bobs_chat, other_agent_chat, "not-an-id",
                    "00000000-0000-0000-0000-000000000000"):
        with pytest.raises(openai.NotFoundError) as refused:
            await ann.sdk.chat.completions.create(
                model=model, messages=[user("Hi")], extra_headers={"X-Service-Chat-Id": chat_id})
        assert refused.value.code == "chat_not_found"
    assert await ChatMessage.count() == before
    await bob.sdk.close()


async def test_an_agent_that_is_not_yours_reads_exactly_like_one_that_does_not_exist(ann):
    bob = await new_caller(ann.api, ann.services, ann.upstream, "bob@example.org")
    bobs_model = await bob.agent()
    await bob.sdk.close()
    messages = []
    for model in (bobs_model, "agent/00000000-0000-0000-0000-000000000000", "agent/x"):
        with pytest.raises(openai.NotFoundError) as refused:
            await ann.sdk.chat.completions.create(model=model, messages=[user("Hi")])
        assert refused.value.code == "model_not_found" and refused.value.param == "model"
        messages.append(refused.value.message.replace(model, "MODEL"))
    assert len(set(messages)) == 1
    assert await Chat.count() == 0


async def test_an_agent_needs_a_user_message_with_text(ann):
    model = await ann.agent()
    with pytest.raises(openai.BadRequestError) as refused:
        await ann.sdk.chat.completions.create(
            model=model, messages=[{"role": "system", "content": "Only this."}])
    assert refused.value.param == "messages"


async def test_streamed_and_unstreamed_agent_answers_give_the_same_text(ann):
    model = await ann.leaflet_agent()
    question = [user("Must dogs be on a lead?")]
    whole = await ann.sdk.chat.completions.create(model=model, messages=question)
    stream = await ann.sdk.chat.completions.create(
        model=model, messages=question, stream=True, stream_options={"include_usage": True})
    chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert {(c.id, c.created, c.model, c.object) for c in chunks} == {
        (chunks[0].id, chunks[0].created, model, "chat.completion.chunk")}
    last_content = [c for c in chunks if c.choices][-1]
    assert last_content.choices[0].finish_reason == "stop"
    final = last_content.model_dump()
    assert final["choices"][0]["delta"]["annotations"][0]["type"] == "url_citation"
    assert final["citations"][0]["title"] == "Visitor leaflet"
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0


async def test_a_stream_sends_keep_alives_while_the_agent_has_no_token_yet(ann, monkeypatch):
    monkeypatch.setattr(agent_calls, "KEEP_ALIVE_SECONDS", 0.05)
    ann.upstream.behaviour = Behaviour(first_byte_delay=0.6)
    response, text = await streamed(ann, {"model": await ann.agent(), "messages": [user("Hi")]})
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-service-chat-id"]
    assert text.startswith(": keep-alive\n\n")
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in data_frames(text)
                   if c["choices"]) == Behaviour().text


async def test_a_failure_after_the_stream_began_is_an_error_frame_then_done(ann):
    ann.upstream.behaviour = Behaviour(chunks=6, interrupt_after=3, interrupt="drop")
    _, text = await streamed(ann, {"model": await ann.agent(), "messages": [user("Hi")]})
    frames = data_frames(text)
    assert frames[0]["choices"][0]["delta"]["role"] == "assistant"
    assert set(frames[-1]) == {"error"}
    assert set(frames[-1]["error"]) == {"message", "type", "param", "code"}
    with pytest.raises(openai.APIError):
        stream = await ann.sdk.chat.completions.create(
            model=await ann.agent(), messages=[user("Hi")], stream=True)
        async for _ in stream:
            pass


async def test_a_server_error_after_a_side_effecting_tool_says_do_not_retry(ann):
    booked = []

    async def book(arguments):
        booked.append(arguments)
        return "Booked for Tuesday."

    ann.services.tools.register(ToolSpec("book_visit", "Books a visit.", side_effecting=True),
                                book)
    model = await ann.agent(tools=["book_visit"])
    ann.upstream.script = [Behaviour(tool_call=ToolCall(name="book_visit", arguments="{}")),
                           Behaviour(status=500)]
    response = await ann.api.post("/v1/chat/completions", headers=ann.bearer, json={
        "model": model, "messages": [user("Book me in")]})
    assert response.status_code == 502 and booked == [{}]
    assert response.headers["x-should-retry"] == "false"
    assert response.headers["x-service-chat-id"]
    assert response.json()["error"]["code"] == "upstream_error"
    ann.upstream.script = [Behaviour(status=500)]  # no tool ran: retrying is harmless
    response = await ann.api.post("/v1/chat/completions", headers=ann.bearer, json={
        "model": model, "messages": [user("Book me in")]})
    assert response.status_code == 502 and "x-should-retry" not in response.headers


async def test_a_client_leaving_an_agent_stream_cancels_the_upstream_and_is_counted(ann):
    ann.upstream.behaviour = Behaviour(chunks=60, chunk_delay=0.05)
    model = await ann.agent()
    async with httpx.AsyncClient(base_url=ann.api.base_url, timeout=10) as client:
        async with client.stream("POST", "/v1/chat/completions", headers=ann.bearer, json={
                "model": model, "stream": True, "messages": [user("Hi")]}) as response:
            async for _ in response.aiter_bytes():
                break
    with anyio.fail_after(10):
        await ann.upstream.wait_open_connections(0)
    await usage_recorded(ann.services)
    rows = await UsageEvent.select(UsageEvent.outcome, UsageEvent.api_key_id,
                                   UsageEvent.source)
    assert rows == [{"outcome": "client_disconnected", "source": "api",
                     "api_key_id": rows[0]["api_key_id"]}] and rows[0]["api_key_id"]


async def test_the_local_model_answers_like_a_provider_model_and_keeps_nothing(ann):
    raw = await ann.sdk.chat.completions.with_raw_response.create(
        model="local", messages=[user("What time is it?")])
    completion = raw.parse()
    assert completion.model == "local" and completion.choices[0].message.content
    assert "X-Service-Chat-Id" not in raw.headers
    stream = await ann.sdk.chat.completions.create(
        model="local", messages=[user("What time is it?")], stream=True)
    text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert text == completion.choices[0].message.content
    assert await Chat.count() == 0
    await ann.services.usage.drain()
    rows = await UsageEvent.select(UsageEvent.model, UsageEvent.source, UsageEvent.outcome)
    assert rows == [{"model": "local", "source": "api", "outcome": "ok"}] * 2


async def test_a_client_leaving_before_a_whole_answer_cancels_it_and_is_counted(ann):
    ann.upstream.behaviour = Behaviour(first_byte_delay=30)
    model = await ann.agent()
    async with httpx.AsyncClient(base_url=ann.api.base_url, timeout=httpx.Timeout(
            10, read=0.5)) as client:
        with pytest.raises(httpx.ReadTimeout):  # the client gives up and hangs up
            await client.post("/v1/chat/completions", headers=ann.bearer, json={
                "model": model, "messages": [user("Hi")]})
    with anyio.fail_after(10):
        await ann.upstream.wait_open_connections(0)
    await usage_recorded(ann.services)
    rows = await UsageEvent.select(UsageEvent.outcome)
    assert rows == [{"outcome": "client_disconnected"}]
