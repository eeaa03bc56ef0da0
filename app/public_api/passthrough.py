"""Passthrough: a provider model called as sent, under governance, nothing stored but usage.

Non-streamed: one upstream call, its JSON answered as is (its very bytes: decoded
only to note usage, never encoded again). Streamed: the upstream's SSE
bytes are relayed unchanged (the fastest path, and exactly what the provider said),
while the relay notes usage and finish for accounting; the upstream is asked for its
usage chunk even when the client did not ask (so its tokens are counted), and that
chunk is then left out of what the client receives. The status line goes out with
the first bytes, as OpenAI's does: an upstream failure before them — a refusal, a
connection that breaks, an error frame as the first event — is an HTTP error
(502/504, or the upstream's own 4xx and 429), so the SDKs' own retries apply; after
them, an ``error`` event and ``[DONE]``. A client that goes away cancels the upstream call at
once; usage is recorded either way, in a ``finally``. A client that went away before the
upstream counted the tokens (hanging up just before the usage chunk) is counted an
estimate: the events relayed as completion tokens, the messages' text at four
characters a token as prompt tokens.
"""

from __future__ import annotations

import time
from typing import Any, AsyncIterator

from blacksheep import Request, Response, StreamedContent

from adapters.providers import RawRelay, UpstreamError
from app.bundle import Services
from app.http.disconnect import cancelled_on_disconnect
from app.http.errors import HttpRefusal, encoded_json_response, header_pairs
from app.http.middleware import arrived_at
from app.services.accounts import Identity
from app.services.providers import ResolvedModel
from app.services.usage import UsageRecord
from core.chat_request import ChatRequest, estimated_prompt_tokens
from core.sse import ChunkEncoder

SSE = b"text/event-stream"


def upstream_failure(error: UpstreamError) -> HttpRefusal:
    code = "upstream_timeout" if error.status_code == 504 else "upstream_error"
    if error.status_code < 500:
        code = "upstream_refused"
    return HttpRefusal(str(error), code=code, status=error.status_code)


class _Meter:
    """Times one model call and records its usage exactly once."""

    def __init__(self, svc: Services, identity: Identity, resolved: ResolvedModel,
                 chat: ChatRequest, asked_at: float) -> None:
        self.svc, self.identity, self.resolved, self.chat = svc, identity, resolved, chat
        self.started = asked_at  # the request's arrival: the caller's whole wait
        self.outcome = "error"
        self.usage: dict[str, Any] | None = None
        self.relayed = 0  #: events relayed to the client

    def relay_ended(self, relay: RawRelay) -> None:
        self.usage, self.relayed = relay.usage, relay.tally.chunks

    def record(self) -> None:
        usage = self.usage
        if usage is None and self.outcome == "client_disconnected":
            usage = {"prompt_tokens": estimated_prompt_tokens(self.chat.messages),
                     "completion_tokens": self.relayed}
        usage = usage or {}
        self.svc.usage.record(UsageRecord(
            account_id=self.identity.account_id, api_key_id=self.identity.api_key_id,
            model=self.resolved.model, provider=self.resolved.provider, source="api",
            outcome=self.outcome, prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            latency_ms=int((time.monotonic() - self.started) * 1000)))


async def complete(request: Request, svc: Services, identity: Identity, chat: ChatRequest,
                   resolved: ResolvedModel, headers: dict[str, str]) -> Response:
    meter = _Meter(svc, identity, resolved, chat, arrived_at(request))
    try:
        with cancelled_on_disconnect(request) as watch:
            raw, answer = await svc.client.complete_raw(resolved.upstream, chat.body)
        if watch.disconnected:
            meter.outcome = "client_disconnected"
            return Response(499)  # nobody is listening; the status is for the log only
        meter.outcome, meter.usage = "ok", answer.get("usage")
        return encoded_json_response(200, raw, headers)
    except UpstreamError as exc:
        raise upstream_failure(exc) from None
    finally:
        meter.record()


async def stream(request: Request, svc: Services, identity: Identity, chat: ChatRequest,
                 resolved: ResolvedModel, headers: dict[str, str]) -> Response:
    meter = _Meter(svc, identity, resolved, chat, arrived_at(request))
    relaying = svc.client.relay(resolved.upstream, chat.body, count_usage=True)
    relay = None  # set once entered: then let go of on the way out
    try:
        relay = await relaying.__aenter__()
        first = await anext(relay, b"")
        refused = relay.opening_error()
        if refused is not None:
            raise refused
    except BaseException as exc:
        if relay is not None:
            await relaying.__aexit__(None, None, None)
        meter.record()
        if isinstance(exc, UpstreamError):
            raise upstream_failure(exc) from None
        raise

    async def body() -> AsyncIterator[bytes]:
        try:
            with cancelled_on_disconnect(request) as watch:
                if first:
                    yield first
                async for data in relay:
                    yield data
            meter.outcome = "client_disconnected" if watch.disconnected else "ok"
            meter.relay_ended(relay)
        except GeneratorExit:
            # Closed before its end by the server writing it: the client went away
            # while a write waited for it to read; what was relayed still counts.
            if watch.disconnected:
                meter.outcome = "client_disconnected"
            meter.relay_ended(relay)
            raise
        except UpstreamError as exc:
            encoder = ChunkEncoder(id="chatcmpl-error", created=int(time.time()),
                                   model=resolved.model)
            yield encoder.error(str(exc), code="upstream_error") + encoder.done()
        finally:
            await relaying.__aexit__(None, None, None)
            meter.record()

    return Response(200, header_pairs({**headers, "Cache-Control": "no-cache"}),
                    StreamedContent(SSE, body))
