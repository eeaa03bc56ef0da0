"""What a key holder could do to a call's usage row: ask for the usage chunk in a
spelling the upstream reads as "no", or hang up on a stream just before that chunk."""

import anyio
import httpx
import openai
import pytest

from app.tables import UsageEvent
from tests.fakes.upstream import Behaviour
from tests.support.usage import usage_recorded

pytestmark = pytest.mark.anyio

QUESTION = [{"role": "user", "content": "tell me a long story about seven foxes"}]


@pytest.mark.parametrize("spelling", ["false", "no", "0", "", [], {}, 1])
async def test_include_usage_that_is_not_a_boolean_is_400_naming_it(v1, spelling):
    # An upstream that reads "false" or "" as false (as lenient servers do) would send
    # no usage chunk, and the stream's tokens would go uncounted.
    with pytest.raises(openai.BadRequestError) as refused:
        await v1.sdk.chat.completions.create(
            model="fake-small", messages=QUESTION, stream=True,
            stream_options={"include_usage": spelling})
    assert refused.value.param == "stream_options.include_usage"
    assert v1.upstream.requests == []


@pytest.mark.parametrize("asked", [False, None])
async def test_include_usage_false_or_null_still_counts_the_tokens(v1, asked):
    stream = await v1.sdk.chat.completions.create(
        model="fake-small", messages=QUESTION, stream=True,
        stream_options={"include_usage": asked})
    assert all(chunk.usage is None for chunk in [chunk async for chunk in stream])
    await usage_recorded(v1.services)
    [row] = await UsageEvent.select().where(UsageEvent.source == "api")
    assert row["completion_tokens"] > 0 and row["prompt_tokens"] > 0


async def cut_after_the_answer(api, upstream, services, headers, model) -> dict:
    """Read the whole answer, whose upstream then stalls before its usage chunk, hang
    up, and return the call's usage row."""
    upstream.behaviour = Behaviour(text="fox " * 40, chunks=40, interrupt_after=42,
                                   interrupt="stall")
    async with httpx.AsyncClient(base_url=api.base_url, timeout=10) as client:
        async with client.stream("POST", "/v1/chat/completions", headers=headers, json={
                "model": model, "stream": True, "messages": QUESTION}) as response:
            received = b""
            async for data in response.aiter_bytes():
                received += data
                if received.count(b"fox") == 40:
                    break
    with anyio.fail_after(10):
        await upstream.wait_open_connections(0)
    await usage_recorded(services)
    [row] = await UsageEvent.select().where(UsageEvent.source == "api")
    return row


async def test_a_stream_cut_before_its_usage_chunk_still_counts_what_was_relayed(v1):
    row = await cut_after_the_answer(v1.api, v1.upstream, v1.services,
                                     {"Authorization": f"Bearer {v1.key}"}, "fake-small")
    assert row["outcome"] == "client_disconnected"
    assert row["completion_tokens"] >= 40 and row["prompt_tokens"] > 0


async def test_an_agent_stream_cut_before_its_usage_chunk_still_counts_what_came(ann):
    row = await cut_after_the_answer(ann.api, ann.upstream, ann.services, ann.bearer,
                                     await ann.agent())
    assert row["outcome"] == "client_disconnected"
    assert row["completion_tokens"] >= 40 and row["prompt_tokens"] > 0
