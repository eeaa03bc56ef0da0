"""The service on a PostgreSQL of its own (``adapters.embedded_postgres``), which a test
may stop and start again without disturbing any other test, and what it asks of it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import anyio

from adapters.embedded_postgres import EmbeddedPostgres
from tests.app.telephony.deployment import carrier_post, voice_params

VOICE = "/api/telephony/carrier/voice"
CHAT = {"model": "fake-small", "messages": [{"role": "user", "content": "Hello"}]}
_sids = itertools.count(1)


@dataclass
class Rig:
    """The served application, its own database server, and the owner's key and session."""

    server: EmbeddedPostgres
    api: object
    services: object
    v1: dict[str, str]
    session: dict[str, str]
    statuses: list[int] = field(default_factory=list)

    async def stop_database(self) -> None:
        await anyio.to_thread.run_sync(self.server.stop)

    async def start_database(self) -> None:
        await anyio.to_thread.run_sync(self.server.start)

    async def complete(self, **extra) -> object:
        response = await self.api.post("/v1/chat/completions", headers=self.v1,
                                       json={**CHAT, **extra})
        self.statuses.append(response.status_code)
        return response

    async def call(self) -> bytes:
        answered = await carrier_post(self.api, VOICE,
                                      voice_params(call_sid=f"CA{next(_sids):04d}"))
        assert answered.status_code == 200, answered.text
        return answered.content
