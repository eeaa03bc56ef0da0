"""The callers of ``/v1`` the tests of this folder drive: an API key and the official
openai SDK pointed at the served application, with the fake upstream behind it."""

from __future__ import annotations

from dataclasses import dataclass

import openai

from tests.fakes.upstream import FakeUpstream, ScriptedUpstream

LEAFLET = ("The clinic opens at nine on weekdays. Parking is free behind the building. "
           "Dogs must be on a lead in the waiting room.")


@dataclass
class V1:
    """A user's API key on an instance whose one provider is the fake upstream."""

    api: object
    services: object
    upstream: FakeUpstream
    key: str
    user: dict
    sdk: openai.AsyncOpenAI


@dataclass
class Caller:
    """A user's API key on an instance whose provider answers from the scripted fake."""

    api: object
    services: object
    upstream: ScriptedUpstream
    user: dict
    key: str
    sdk: openai.AsyncOpenAI

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    async def agent(self, **fields) -> str:
        # An owner's agents in use have names apart: each made here is numbered.
        made = len((await self.api.get("/api/agents", headers=self.user)).json()["data"])
        body = {"name": f"Front desk {made + 1}", "model": "fake-small", **fields}
        created = await self.api.post("/api/agents", headers=self.user, json=body)
        assert created.status_code == 201, created.text
        return f"agent/{created.json()['id']}"

    async def leaflet_agent(self) -> str:
        library = (await self.api.post("/api/libraries", headers=self.user,
                                       json={"name": "Leaflets"})).json()
        added = await self.api.post(f"/api/libraries/{library['id']}/documents",
                                    headers=self.user,
                                    json={"title": "Visitor leaflet", "content": LEAFLET})
        assert added.status_code == 201, added.text
        return await self.agent(model="local", library_ids=[library["id"]])


async def new_caller(api, services, upstream, email: str) -> Caller:
    user = await api.as_new_user(services, email)
    minted = (await api.post("/api/profile/api-keys", headers=user, json={"name": "cli"})).json()
    sdk = openai.AsyncOpenAI(base_url=f"{api.base_url}/v1", api_key=minted["key"], max_retries=0)
    return Caller(api, services, upstream, user, minted["key"], sdk)
