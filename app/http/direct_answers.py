"""The direct routes answered by ``svc serve``'s protocol itself, with no ASGI between.

Under uvicorn a response travels as ASGI messages: BlackSheep turns the response into
dictionaries (the status and headers, then each body part), and uvicorn takes them
apart again, checking every header against two regular expressions. For the direct
routes (``app.http.direct_routes``: ``POST /v1/chat/completions``, most of what a busy
server answers) that round trip, the front door's ASGI frame and the transport that
holds a head back for its body were a large share of the server's own work per
request (docs/performance.md).

``DirectAnswerProtocol`` starts such a request's task on the BlackSheep request made
straight from uvicorn's scope, and ``write_response`` writes the response onto the
connection: the head with the body, or with a stream's first part, in one write, then
each part as a chunk. Everything else stays uvicorn's request cycle: reading the body,
``100 Continue``, hearing a disconnect (a cycle's writes then stop, as uvicorn's do),
keep-alive, pipelining, flow control and the concurrency limit. A request the front
door refuses, and any other route, is served through ASGI as before.
"""

from __future__ import annotations

import asyncio
import re
from contextlib import aclosing
from typing import Any

from blacksheep import Response
from blacksheep.contents import StreamedContent
from blacksheep.scribe import set_headers_for_response_content
from uvicorn.protocols.http.httptools_impl import (
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)

from app.http.direct_routes import Handler, forget

#: What no header may hold but the line ends of the head itself (which ``_head`` counts).
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F])
#: What a header name is made of (RFC 9110's ``token``).
_TOKEN = re.compile(rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_MAX_NAMES_KEPT = 256


class _Names:
    """Header names as they are written: lowercased, and checked to be tokens. A
    response's names are our own code's, a few dozen in all, so each is worked out
    once, not on every response."""

    def __init__(self) -> None:
        self._written: dict[bytes, bytes] = {}

    def written(self, name: bytes) -> bytes:
        known = self._written.get(name)
        if known is not None:
            return known
        if not _TOKEN.match(name):
            raise RuntimeError("Invalid HTTP header name.")
        lowered = name.lower()
        if len(self._written) < _MAX_NAMES_KEPT:
            self._written[name] = lowered
        return lowered


_names = _Names()


def _closes(value: bytes) -> bool:
    return b"close" in (token.strip() for token in value.lower().split(b","))


def _head(cycle: RequestResponseCycle, status: int, headers: list[tuple[bytes, bytes]]
          ) -> bytes:
    """The status line and headers, as uvicorn would write them for this cycle."""
    every = (*cycle.default_headers, *headers)
    ends = len(every) + 2  # a line for the status, for each header, and a blank one
    parts = [STATUS_LINE[status]]
    said_close = False
    for name, value in every:
        name = _names.written(name)
        if name == b"connection" and _closes(value):
            cycle.keep_alive = False
            said_close = True
        parts += (name, b": ", value, b"\r\n")
    if not cycle.keep_alive and not said_close:
        parts.append(b"connection: close\r\n")
        ends += 1
    parts.append(b"\r\n")
    head = b"".join(parts)
    # One CR and one LF end each line, and nothing else in the head is a control
    # byte: a value holding either (a response split), or any other control byte,
    # changes what deleting them all takes away.
    if (len(head) - len(head.translate(None, _CONTROL_BYTES)) != 2 * ends
            or head.count(b"\r") != ends):
        raise RuntimeError("Invalid HTTP header value.")
    return head


async def _write(cycle: RequestResponseCycle, transport: asyncio.Transport, data: bytes
                 ) -> None:
    """As uvicorn's ``send`` writes: after the client reads what is waiting, and not at
    all once it has gone."""
    if cycle.flow.write_paused and not cycle.disconnected:
        await cycle.flow.drain()
    if not cycle.disconnected:
        transport.write(data)


async def write_response(cycle: RequestResponseCycle, transport: asyncio.Transport,
                         response: Response) -> None:
    """Write ``response`` for ``cycle`` and end the cycle, as uvicorn ends one. The
    response counts as started once its head is written, not before: a stream that
    fails before its first part still gets a 500."""
    set_headers_for_response_content(response)  # what BlackSheep adds for ASGI too
    content = response.content
    head = _head(cycle, response.status, response.headers.values)
    cycle.waiting_for_100_continue = False
    if not content:
        await _write(cycle, transport, head)
    elif content.length >= 0 and not isinstance(content, StreamedContent):
        await _write(cycle, transport, head + content.body)
    else:
        await _write_stream(cycle, transport, head, content)
    cycle.response_started = True
    if cycle.disconnected:
        return
    cycle.response_complete = True
    cycle.message_event.set()
    if not cycle.keep_alive:
        transport.close()
    cycle.on_response()


async def _write_stream(cycle: RequestResponseCycle, transport: asyncio.Transport,
                        head: bytes, content: StreamedContent) -> None:
    """The head with the first part, then each part: chunked, or counted against the
    length BlackSheep has said. The route's generator is closed however this ends
    (a client gone while its reads were awaited, an error), not left to the
    collector."""
    chunked = content.length < 0
    waiting = head
    sent = 0
    async with aclosing(content.generator()) as parts:
        async for part in parts:
            if not part:
                continue
            sent += len(part)
            if not chunked and sent > content.length:
                raise RuntimeError("Response content longer than Content-Length")
            await _write(cycle, transport, waiting + (
                b"%x\r\n%b\r\n" % (len(part), part) if chunked else part))
            if waiting:
                cycle.response_started, waiting = True, b""
    if not chunked and sent < content.length:
        raise RuntimeError("Response content shorter than Content-Length")
    await _write(cycle, transport, waiting + (b"0\r\n\r\n" if chunked else b""))


def _nothing() -> None:
    return None


async def answer_directly(app: Any, chain: Handler, scope: dict[str, Any],
                          cycle: RequestResponseCycle, transport: asyncio.Transport
                          ) -> None:
    """Serve one request of a direct route: what uvicorn's ``run_asgi`` does around
    the application, with BlackSheep's request and response in place of ASGI."""
    request = None
    try:
        request = app.instantiate_request(scope, cycle.receive)
        await write_response(cycle, transport,
                             await app.direct_routes.answer(chain, request))
    except BaseException as exc:  # noqa: BLE001 - as ``run_asgi``: the task ends here
        if cycle.disconnected and isinstance(exc, asyncio.CancelledError):
            return  # the client went away while we waited to write: nobody to answer
        cycle.logger.error("Exception in a direct route", exc_info=exc)
        if not cycle.response_started:
            await cycle.send_500_response()
        else:
            transport.close()
    finally:
        if request is not None:
            forget(request)
        cycle.on_response = _nothing


class DirectAnswerProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, answering the direct routes itself."""

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        # ``app`` is the application, or past the concurrency limit uvicorn's 503.
        direct_route = getattr(app, "direct_route", None)
        try:
            found = direct_route(cycle.scope) if direct_route is not None else None
        except Exception:  # noqa: BLE001 - the application's path answers it as ever
            self.logger.exception("Direct route not taken")
            found = None
        if found is None:
            super()._start_asgi_task(cycle, app)
            return
        chain, scope = found
        task = self.loop.create_task(answer_directly(app, chain, scope, cycle,
                                                     self.transport))
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)
