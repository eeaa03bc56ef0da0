"""A notification receiver on a loopback port: answers each POST with the next status
of its script (200 once the script runs out), records what it got, and keeps the
idempotency keys it has acted on so a repeat is dropped, as a careful receiver would."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

import anyio
from aiohttp import web

from tests.support.aiohttp_site import serving


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    script: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    #: notifications acted on, by idempotency key (a repeat is answered 200, not kept)
    acted_on: dict[str, Received] = field(default_factory=dict)
    #: set while a request is held (``hold`` below)
    holding: anyio.Event = field(default_factory=anyio.Event)
    #: hold the next request unanswered until this is set (None: answer at once)
    release: anyio.Event | None = None
    arrived: anyio.Event = field(default_factory=anyio.Event)
    #: decides the status from the request instead of the script, when set
    decide: Callable[[Received], int | None] | None = None
    #: seconds each answer takes, as a slow receiver's would
    delay: float = 0.0

    async def _handle(self, request: web.Request) -> web.Response:
        got = Received(request.path, dict(request.headers), await request.read())
        self.received.append(got)
        self.arrived.set()
        if self.release is not None:
            release, self.release = self.release, None
            self.holding.set()
            await release.wait()
        if self.delay:
            await anyio.sleep(self.delay)
        decided = self.decide(got) if self.decide is not None else None
        status = decided or (self.script.pop(0) if self.script else 200)
        key = got.headers.get("Idempotency-Key")
        if 200 <= status < 300 and key is not None:
            self.acted_on.setdefault(key, got)
        return web.Response(status=status, text="ok" if status < 300 else "no")

    async def __aenter__(self) -> str:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._serving = serving(app)
        return f"http://127.0.0.1:{await self._serving.__aenter__()}"

    async def __aexit__(self, *exc_info: object) -> None:
        await self._serving.__aexit__(*exc_info)
