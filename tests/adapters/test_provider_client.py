"""ProviderClient against the loopback fake upstream: answers, failures, cancellation."""

from __future__ import annotations

import json

import anyio
import pytest

from adapters.providers import (
    ProviderClient,
    Timeouts,
    Upstream,
    UpstreamDisconnected,
    UpstreamError,
    UpstreamProtocolError,
    UpstreamStatusError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from tests.fakes.upstream import Behaviour, FakeUpstream, ToolCall
from tests.support.entered import entered
from tests.support.listener import free_port

pytestmark = pytest.mark.anyio

MESSAGES = [{"role": "user", "content": "say hello to the test"}]
BODY = {"model": "fake-small", "messages": MESSAGES}
# A generous guard so a broken test fails instead of hanging; never a timing assertion.
GUARD = 10


fake = entered(FakeUpstream)
client = entered(lambda: ProviderClient(timeouts=Timeouts(connect=2, read=5)))


@pytest.fixture
def upstream(fake):
    return Upstream(fake.base_url, api_key="sk-upstream", extra_headers={"X-Org": "acme"})


async def collect(stream) -> list:
    return [item async for item in stream]


async def ask(client, mode: str, upstream) -> None:
    """Send ``BODY`` the client's way named by ``mode`` (``complete``, ``stream`` or
    ``relay``), reading a stream to its end."""
    if mode == "complete":
        await client.complete(upstream, BODY)
    else:
        async with getattr(client, mode)(upstream, BODY) as stream:
            await collect(stream)


def text_of(chunks: list[dict]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


# -- answers -------------------------------------------------------------------------


async def test_list_models_sends_the_key_and_extra_headers(fake, client, upstream):
    assert await client.list_models(upstream) == ["fake-small", "fake-large"]
    request = fake.requests[-1]
    assert (request.method, request.path) == ("GET", "/v1/models")
    assert request.headers["authorization"] == "Bearer sk-upstream"
    assert request.headers["x-org"] == "acme"


async def test_a_keyless_upstream_gets_no_authorization_header(fake, client):
    await client.list_models(Upstream(fake.base_url + "/"))
    assert "authorization" not in fake.requests[-1].headers


async def test_complete_forwards_unknown_parameters_untouched(fake, client, upstream):
    body = {**BODY, "top_k": 40, "x_vendor": {"keep": [1, "two"]}, "stream": True}
    answer = await client.complete(upstream, body)
    assert answer["choices"][0]["message"]["content"] == fake.behaviour.text
    sent = fake.requests[-1].json
    assert sent == {**body, "stream": False}
    assert fake.requests[-1].headers["content-type"] == "application/json"


async def test_stream_yields_chunks_with_the_whole_text_and_usage(fake, client, upstream):
    fake.behaviour = Behaviour(text="Bonjour, le monde entier", chunks=5)
    body = {**BODY, "stream_options": {"include_usage": True}}
    async with client.stream(upstream, body) as stream:
        chunks = await collect(stream)
    assert text_of(chunks) == "Bonjour, le monde entier"
    assert stream.finish_reason == "stop"
    assert stream.usage == {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}
    assert fake.requests[-1].json["stream"] is True


async def test_stream_without_usage_requested_has_none(fake, client, upstream):
    async with client.stream(upstream, BODY) as stream:
        await collect(stream)
    assert stream.usage is None and stream.finish_reason == "stop"


async def test_a_stream_without_done_after_its_finish_reason_is_accepted(fake, client, upstream):
    fake.behaviour = Behaviour(send_done=False)
    async with client.stream(upstream, BODY) as stream:
        assert text_of(await collect(stream)) == fake.behaviour.text


async def test_tool_call_without_streaming(fake, client, upstream):
    fake.behaviour = Behaviour(tool_call=ToolCall())
    answer = await client.complete(upstream, {**BODY, "tools": [{"type": "function"}]})
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": ToolCall().arguments,
    }


async def test_tool_call_arguments_streamed_in_pieces_add_up(fake, client, upstream):
    fake.behaviour = Behaviour(tool_call=ToolCall(), chunks=6)
    async with client.stream(upstream, BODY) as stream:
        chunks = await collect(stream)
    calls = [call for c in chunks for call in c["choices"][0]["delta"].get("tool_calls") or []]
    assert calls[0]["function"]["name"] == "get_weather"
    assert "".join(call["function"]["arguments"] for call in calls) == ToolCall().arguments
    assert len(calls) == 7 and stream.finish_reason == "tool_calls"


async def test_connections_are_reused_between_calls(fake, client, upstream):
    await client.complete(upstream, BODY)
    async with client.stream(upstream, BODY) as stream:
        await collect(stream)
    async with client.relay(upstream, BODY) as relay:
        await collect(relay)
    await client.list_models(upstream)
    assert fake.connections_used == 1


# -- raw relay -------------------------------------------------------------------------


async def test_relay_returns_exactly_the_upstream_bytes_and_the_usage(fake, client, upstream):
    fake.behaviour = Behaviour(text="relayed as is", chunks=4, keep_alive_comments=True)
    body = {**BODY, "stream_options": {"include_usage": True}}
    async with client.relay(upstream, body) as relay:
        data = b"".join(await collect(relay))
    assert data == fake.sent
    assert b": ping\n\n" in data and data.endswith(b"data: [DONE]\n\n")
    assert relay.usage == {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}
    assert relay.finish_reason == "stop" and relay.tally.done


async def test_relay_counts_usage_the_client_did_not_ask_for_and_hides_its_chunk(
        fake, client, upstream):
    fake.behaviour = Behaviour(text="counted quietly", chunks=4)
    async with client.relay(upstream, BODY, count_usage=True) as relay:
        data = b"".join(await collect(relay))
    assert fake.requests[-1].json["stream_options"] == {"include_usage": True}
    assert relay.usage == {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}
    events = [json.loads(line[6:]) for line in data.decode().split("\n\n")
              if line.startswith("data: {")]
    assert events and all(event["choices"] for event in events)  # no usage chunk
    assert data.endswith(b"data: [DONE]\n\n")
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events) == (
        "counted quietly")


async def test_relay_leaves_a_client_that_asked_for_usage_its_chunk(fake, client, upstream):
    body = {**BODY, "stream_options": {"include_usage": True}}
    async with client.relay(upstream, body, count_usage=True) as relay:
        data = b"".join(await collect(relay))
    assert data == fake.sent and b'"choices": []' in data


async def test_an_upstream_refusing_stream_options_is_asked_without_from_then_on(
        fake, client, upstream):
    fake.behaviour = Behaviour(text="no options here", refuse_stream_options=True)
    for _ in range(2):
        async with client.relay(upstream, BODY, count_usage=True) as relay:
            data = b"".join(await collect(relay))
        assert data == fake.sent and relay.usage is None
    assert ["stream_options" in request.json for request in fake.requests] == [
        True, False, False]


async def test_a_callers_own_bad_stream_options_change_nothing_for_the_next_caller(
        fake, client, upstream):
    fake.behaviour = Behaviour(refuse_stream_options=True)
    with pytest.raises(UpstreamStatusError):
        async with client.relay(upstream, {**BODY, "stream_options": {"bogus": 1}},
                                count_usage=True):
            pass
    fake.behaviour = Behaviour()  # the upstream takes stream_options again
    async with client.relay(upstream, BODY, count_usage=True) as relay:
        await collect(relay)
    assert relay.usage is not None


async def test_a_refusal_for_another_reason_is_the_callers(fake, client, upstream):
    fake.behaviour = Behaviour(status=400, error_message="messages must not be empty")
    with pytest.raises(UpstreamStatusError):
        async with client.relay(upstream, BODY, count_usage=True):
            pass
    assert len(fake.requests) == 1


async def test_relay_passes_an_in_stream_error_through_and_notes_it(fake, client, upstream):
    fake.behaviour = Behaviour(interrupt_after=2, interrupt="error", error_message="overloaded")
    async with client.relay(upstream, BODY) as relay:
        data = b"".join(await collect(relay))
    assert data == fake.sent and b'"overloaded"' in data
    assert relay.tally.error["message"] == "overloaded"


async def test_parsed_stream_raises_on_an_in_stream_error(fake, client, upstream):
    fake.behaviour = Behaviour(interrupt_after=2, interrupt="error", error_message="overloaded")
    with pytest.raises(UpstreamStatusError) as caught:
        async with client.stream(upstream, BODY) as stream:
            await collect(stream)
    assert (caught.value.status, caught.value.message) == (503, "overloaded")


# -- failures ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "status_code"),
    [(400, 400), (401, 502), (404, 404), (429, 429), (500, 502), (503, 502), (504, 504)],
)
@pytest.mark.parametrize("mode", ["complete", "stream", "relay"])
async def test_error_statuses_carry_the_upstream_message(fake, client, upstream, status, status_code, mode):
    fake.behaviour = Behaviour(status=status, error_message=f"refused with {status}")
    with pytest.raises(UpstreamStatusError) as caught:
        await ask(client, mode, upstream)
    error = caught.value
    assert (error.status, error.message, error.status_code) == (status, f"refused with {status}", status_code)
    assert json.loads(error.body)["error"]["message"] == f"refused with {status}"


async def test_refused_connection_is_unavailable(client):
    with pytest.raises(UpstreamUnavailable) as caught:
        await client.complete(Upstream(f"http://127.0.0.1:{free_port()}/v1"), BODY)
    assert caught.value.status_code == 502
    assert not isinstance(caught.value, UpstreamDisconnected)


async def test_slow_first_byte_times_out(fake, upstream):
    fake.behaviour = Behaviour(first_byte_delay=30)
    async with ProviderClient(timeouts=Timeouts(connect=2, read=0.2)) as client:
        with anyio.fail_after(GUARD), pytest.raises(UpstreamTimeout) as caught:
            await client.complete(upstream, BODY)
    assert caught.value.status_code == 504


async def test_a_stream_that_goes_silent_times_out(fake, client, upstream):
    fake.behaviour = Behaviour(chunks=3, interrupt_after=2, interrupt="stall")
    with anyio.fail_after(GUARD), pytest.raises(UpstreamTimeout):
        async with client.stream(upstream, BODY, timeouts=Timeouts(connect=2, read=0.2)) as stream:
            await collect(stream)
    with anyio.fail_after(GUARD):
        await fake.wait_open_connections(0)


@pytest.mark.parametrize("mode", ["stream", "relay"])
async def test_a_connection_dropped_mid_stream_is_a_disconnect(fake, client, upstream, mode):
    fake.behaviour = Behaviour(chunks=4, interrupt_after=3, interrupt="drop")
    received = []
    with pytest.raises(UpstreamDisconnected) as caught:
        async with getattr(client, mode)(upstream, BODY) as stream:
            async for item in stream:
                received.append(item)
    assert received and caught.value.status_code == 502


async def test_relay_hands_out_only_whole_events_before_a_cut(fake, client, upstream):
    fake.behaviour = Behaviour(chunks=4, interrupt_after=3, interrupt="drop_mid_event")
    relayed = b""
    with pytest.raises(UpstreamDisconnected):
        async with client.relay(upstream, BODY) as relay:
            async for data in relay:
                relayed += data
    # Whatever the caller wrote so far ends on an event boundary, so its own error
    # frame can follow; the half event the upstream sent never reaches it.
    assert relayed.endswith(b"\n\n") and fake.sent.startswith(relayed)
    assert len(relayed) < len(fake.sent) and relayed.count(b"data: ") == 3


@pytest.mark.parametrize("mode", ["stream", "relay"])
async def test_a_body_that_ends_before_the_last_chunk_is_a_protocol_error(fake, client, upstream, mode):
    fake.behaviour = Behaviour(chunks=4, interrupt_after=3, interrupt="end")
    with pytest.raises(UpstreamProtocolError, match="before its last chunk"):
        async with getattr(client, mode)(upstream, BODY) as stream:
            await collect(stream)


@pytest.mark.parametrize(
    ("behaviour", "mode"),
    [
        (Behaviour(garbage=b"data: {not json\n\n"), "stream"),
        (Behaviour(garbage=b'data: {"choices": [{"finish_reason": "st'), "relay"),
        (Behaviour(garbage=b"<html>teapot</html>"), "complete"),
        (Behaviour(garbage=b"[1, 2, 3]"), "complete"),
        (Behaviour(not_http=True), "complete"),
        (Behaviour(not_http=True), "stream"),
    ],
    ids=["sse-not-json", "sse-cut-json", "html", "json-not-object", "not-http", "not-http-stream"],
)
async def test_garbage_is_a_protocol_error(fake, client, upstream, behaviour, mode):
    fake.behaviour = behaviour
    with pytest.raises(UpstreamProtocolError):
        await ask(client, mode, upstream)


async def test_a_json_answer_to_a_stream_request_is_a_protocol_error(fake, client, upstream):
    fake.behaviour = Behaviour(
        garbage=b'{"error": {"message": "streaming unsupported"}}', garbage_content_type="application/json"
    )
    with pytest.raises(UpstreamProtocolError, match="streaming unsupported"):
        async with client.stream(upstream, BODY) as stream:
            await collect(stream)


async def test_an_endless_event_is_refused_past_the_cap(fake, upstream):
    fake.behaviour = Behaviour(text="x" * 5000, chunks=1)
    async with ProviderClient(max_event_bytes=1000) as client:
        with pytest.raises(UpstreamProtocolError) as caught:
            async with client.stream(upstream, BODY) as stream:
                await collect(stream)
    # the caller is told in words; the parser's own account is kept for the log
    assert str(caught.value).endswith("the provider's answer could not be read")
    assert "larger than" in caught.value.detail


async def test_every_failure_is_an_upstream_error_with_a_status_hint():
    for kind in (UpstreamUnavailable, UpstreamDisconnected, UpstreamTimeout, UpstreamProtocolError):
        assert issubclass(kind, UpstreamError) and kind("x").status_code in (502, 504)


async def test_a_closed_client_refuses_calls(upstream):
    client = ProviderClient()
    await client.aclose()
    with pytest.raises(RuntimeError):
        await client.list_models(upstream)


# -- cancellation --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["stream", "relay"])
async def test_cancelling_mid_stream_closes_the_upstream_connection(fake, client, upstream, mode):
    fake.behaviour = Behaviour(chunks=10, interrupt_after=2, interrupt="stall")
    got_first = anyio.Event()

    async def consume() -> None:
        async with getattr(client, mode)(upstream, BODY) as stream:
            async for _ in stream:
                got_first.set()

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(consume)
            await got_first.wait()
            assert fake.open_connections == 1
            tasks.cancel_scope.cancel()  # as when our own client disconnects
        await fake.wait_open_connections(0)


async def test_cancelling_before_the_answer_starts_closes_the_connection(fake, client, upstream):
    fake.behaviour = Behaviour(first_byte_delay=30)
    with anyio.fail_after(GUARD):
        with anyio.move_on_after(0.2):
            async with client.stream(upstream, BODY) as stream:
                await collect(stream)
        await fake.wait_open_connections(0)


async def test_leaving_a_stream_early_closes_the_connection(fake, client, upstream):
    fake.behaviour = Behaviour(chunks=10, interrupt_after=5, interrupt="stall")
    async with client.stream(upstream, BODY) as stream:
        async for _ in stream:
            break
    with anyio.fail_after(GUARD):
        await fake.wait_open_connections(0)
