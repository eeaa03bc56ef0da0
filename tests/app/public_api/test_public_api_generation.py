"""Agent calls over /v1 with the request's own generation parameters: what reaches the
agent's model, what the built-in ``local`` model does with them, JSON answers and their
citations, the links in answers, the optional fields the SDKs' types name, and
failures before a stream's first byte answered with a status."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from app.config import BootConfig
from app.tables import Chat, UsageEvent
from core.pipeline import CITATION_RULE
from tests.app.public_api.callers import LEAFLET, Caller
from tests.app.public_api.test_public_api_agents import data_frames, streamed, user
from tests.fakes.upstream import Behaviour

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "json_schema", "json_schema": {"name": "parking", "strict": True, "schema": {
    "type": "object", "properties": {"where": {"type": "string"}}, "required": ["where"],
    "additionalProperties": False}}}
PARAMETERS = {"max_tokens": 50, "max_completion_tokens": 40, "stop": ["\n\n"],
              "temperature": 0.2, "top_p": 0.9, "seed": 7, "presence_penalty": 0.5,
              "frequency_penalty": -0.5, "user": "user-42"}


async def library_agent(ann: Caller, model: str = "fake-small", **fields) -> str:
    library = (await ann.api.post("/api/libraries", headers=ann.user,
                                  json={"name": "Leaflets"})).json()
    added = await ann.api.post(f"/api/libraries/{library['id']}/documents", headers=ann.user,
                               json={"title": "Visitor leaflet", "content": LEAFLET})
    assert added.status_code == 201, added.text
    return await ann.agent(model=model, library_ids=[library["id"]], **fields)


def without_public_url(services) -> None:
    services.boot = BootConfig({key: value for key, value in services.boot.values.items()
                                if key != "server.public_url"})


# -- response_format ---------------------------------------------------------------------


async def test_a_json_schema_reaches_the_agents_model_and_citations_stay_out_of_the_json(ann):
    model = await library_agent(ann)
    answer = json.dumps({"where": "behind the building"})  # the fake fills the schema
    ann.upstream.behaviour = Behaviour(text="behind the building")
    completion = await ann.sdk.chat.completions.create(
        model=model, messages=[user("Where is parking?")], response_format=SCHEMA)
    sent = ann.upstream.chat_requests()[-1]
    assert sent["response_format"] == SCHEMA
    assert CITATION_RULE not in sent["messages"][0]["content"]  # no markers asked for
    message = completion.choices[0].message
    assert json.loads(message.content) == {"where": "behind the building"}
    [annotation] = message.model_dump()["annotations"]
    assert annotation["url_citation"]["start_index"] == 0
    assert annotation["url_citation"]["end_index"] == len(answer)
    assert annotation["url_citation"]["title"] == "Visitor leaflet"
    stream = await ann.sdk.chat.completions.create(
        model=model, messages=[user("Where is parking?")], response_format={"type": "json_object"},
        stream=True)
    chunks = [chunk async for chunk in stream]
    assert json.loads("".join(c.choices[0].delta.content or "" for c in chunks)) == {
        "answer": "behind the building"}
    assert ann.upstream.chat_requests()[-1]["response_format"] == {"type": "json_object"}


async def test_response_format_the_local_model_cannot_honour_is_400_naming_it(ann):
    model = await library_agent(ann, model="local")
    for name in (model, "local"):
        for stream in (False, True):
            with pytest.raises(openai.BadRequestError) as refused:
                await ann.sdk.chat.completions.create(
                    model=name, messages=[user("Where is parking?")], stream=stream,
                    response_format={"type": "json_object"})
            assert refused.value.param == "response_format"
            assert "local model" in refused.value.message
    assert await Chat.count() == 0  # refused before anything was kept or counted
    await ann.services.usage.drain()
    assert await UsageEvent.count() == 0


async def test_an_upstream_refusing_response_format_is_400_naming_it(ann):
    model = await ann.agent()
    ann.upstream.behaviour = Behaviour(
        status=400, error_message="Invalid parameter: 'response_format' of type 'json_schema' "
                                  "is not supported with this model.")
    for stream in (False, True):
        with pytest.raises(openai.BadRequestError) as refused:
            await ann.sdk.chat.completions.create(
                model=model, messages=[user("Hi")], response_format=SCHEMA, stream=stream)
        assert refused.value.param == "response_format"
        assert refused.value.code == "unsupported_parameter"


# -- generation parameters ---------------------------------------------------------------


async def test_generation_parameters_reach_the_agents_model(ann):
    model = await ann.agent()
    await ann.sdk.chat.completions.create(model=model, messages=[user("Hi")], **PARAMETERS)
    sent = ann.upstream.chat_requests()[-1]
    assert {name: sent.get(name) for name in PARAMETERS} == PARAMETERS


async def test_the_local_model_honours_max_tokens_and_stop(ann):
    model = await library_agent(ann, model="local")
    question = [user("Where is parking?")]
    whole = await ann.sdk.chat.completions.create(model=model, messages=question)
    assert whole.choices[0].message.content == "Parking is free behind the building [1]."
    one = await ann.sdk.chat.completions.create(model=model, messages=question, max_tokens=1)
    assert (one.choices[0].message.content, one.choices[0].finish_reason) == ("Parking", "length")
    assert one.usage.completion_tokens == 1
    stream = await ann.sdk.chat.completions.create(
        model="local", messages=[user("What time is it?")], max_completion_tokens=2, stream=True)
    chunks = [chunk async for chunk in stream]
    assert len("".join(c.choices[0].delta.content or "" for c in chunks).split()) == 2
    assert chunks[-1].choices[0].finish_reason == "length"
    stopped = await ann.sdk.chat.completions.create(model=model, messages=question,
                                                    stop=[" behind", "free"])
    assert stopped.choices[0].message.content == "Parking is "
    assert stopped.choices[0].finish_reason == "stop"


async def test_a_parameter_the_local_model_cannot_honour_or_a_malformed_one_is_400(ann):
    refusals = [({"temperature": 0.7}, "temperature"), ({"top_p": 0.5}, "top_p"),
                ({"presence_penalty": 1}, "presence_penalty"), ({"top_p": 3}, "top_p"),
                ({"max_tokens": 0}, "max_tokens"), ({"stop": [1]}, "stop"),
                ({"seed": "x"}, "seed"), ({"response_format": {"type": "xml"}}, "response_format")]
    for extra, param in refusals:
        answer = await ann.api.post("/v1/chat/completions", headers=ann.bearer, json={
            "model": "local", "messages": [user("Hi")], **extra})
        assert answer.status_code == 400, extra
        assert answer.json()["error"]["param"] == param, answer.json()
    accepted = await ann.sdk.chat.completions.create(
        model="local", messages=[user("Hi")], temperature=0, top_p=1, seed=3, user="u")
    assert accepted.choices[0].message.content


# -- links, optional fields --------------------------------------------------------------


async def test_citation_links_start_with_the_requests_origin_unless_a_public_url_is_set(ann):
    model = await library_agent(ann, model="local")
    question = [user("Where is parking?")]
    configured = await ann.sdk.chat.completions.create(model=model, messages=question)
    url = configured.choices[0].message.model_dump()["annotations"][0]["url_citation"]["url"]
    assert url.startswith("http://127.0.0.1:8080/api/libraries/")
    without_public_url(ann.services)
    async with httpx.AsyncClient(base_url=ann.api.base_url, timeout=20) as client:
        answer = await client.post("/v1/chat/completions", headers={
            **ann.bearer, "Host": "svc.example:9443"}, json={"model": model, "messages": question})
    url = answer.json()["choices"][0]["message"]["annotations"][0]["url_citation"]["url"]
    assert url.startswith("http://svc.example:9443/api/libraries/"), url
    _, text = await streamed(ann, {"model": model, "messages": question})
    final = [frame for frame in data_frames(text) if frame["choices"]][-1]
    url = final["choices"][0]["delta"]["annotations"][0]["url_citation"]["url"]
    assert url.startswith(f"{ann.api.base_url}/api/libraries/")


async def test_answers_carry_a_stable_system_fingerprint_and_a_null_refusal(ann):
    model = await ann.agent()
    first = await ann.sdk.chat.completions.create(model=model, messages=[user("Hi")])
    again = await ann.sdk.chat.completions.create(model=model, messages=[user("Hi")])
    assert first.system_fingerprint.startswith("fp_")
    assert first.system_fingerprint == again.system_fingerprint
    assert "refusal" in first.choices[0].message.model_fields_set
    assert first.choices[0].message.refusal is None
    stream = await ann.sdk.chat.completions.create(model=model, messages=[user("Hi")],
                                                   stream=True)
    chunks = [chunk async for chunk in stream]
    assert {c.system_fingerprint for c in chunks} == {first.system_fingerprint}
    assert "refusal" in chunks[0].choices[0].delta.model_fields_set
    agent_id = model.removeprefix("agent/")
    changed = await ann.api.patch(f"/api/agents/{agent_id}", headers=ann.user,
                                  json={"instructions": "Answer in French."})
    assert changed.status_code == 200, changed.text
    later = await ann.sdk.chat.completions.create(model=model, messages=[user("Hi")])
    assert later.system_fingerprint != first.system_fingerprint
    local = await ann.sdk.chat.completions.create(model="local", messages=[user("Hi")])
    assert local.system_fingerprint.startswith("fp_") and local.choices[0].message.refusal is None


# -- a stream that fails before its first byte ---------------------------------------------


async def test_an_agent_stream_failing_before_its_first_byte_answers_with_a_status(ann):
    model = await ann.agent()
    for upstream_status, status in ((429, 429), (500, 502), (503, 502)):
        ann.upstream.behaviour = Behaviour(status=upstream_status)
        response, text = await streamed(ann, {"model": model, "messages": [user("Hi")]})
        assert response.status_code == status, text
        assert response.headers["content-type"].startswith("application/json")
        assert set(json.loads(text)["error"]) == {"message", "type", "param", "code"}
        assert response.headers["x-service-chat-id"]
    ann.upstream.behaviour = Behaviour(chunks=6, interrupt_after=0, interrupt="drop")
    response, _ = await streamed(ann, {"model": model, "messages": [user("Hi")]})
    assert response.status_code == 502


async def test_a_passthrough_stream_failing_before_its_first_byte_answers_with_a_status(ann):
    body = {"model": "fake-small", "messages": [user("Hi")]}
    for behaviour, status in ((Behaviour(interrupt_after=0, interrupt="drop"), 502),
                              (Behaviour(interrupt_after=0, interrupt="error"), 502),
                              (Behaviour(status=429), 429)):
        ann.upstream.behaviour = behaviour
        response, text = await streamed(ann, body)
        assert response.status_code == status, text
        assert json.loads(text)["error"]["message"]
    ann.upstream.behaviour = Behaviour(chunks=6, interrupt_after=3, interrupt="drop")
    response, text = await streamed(ann, body)  # after the first byte: a frame, as before
    assert response.status_code == 200 and '"error"' in text
