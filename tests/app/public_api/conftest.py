"""Fixtures of the /v1 tests: a caller with an API key and the SDK, on an instance whose
provider is the fake upstream (``v1``), or the scripted one agents are tested with (``ann``)."""

from __future__ import annotations

import openai
import pytest

from tests.app.public_api.callers import V1, new_caller
from tests.fakes.upstream import FakeUpstream, ScriptedUpstream


@pytest.fixture
async def v1(api, services):
    async with FakeUpstream() as upstream:
        admin = await api.as_new_user(services, "boss@example.org", role="admin")
        await api.post("/api/admin/providers", headers=admin, json={
            "name": "fake", "base_url": upstream.base_url, "api_key": "instance-key",
            "models": ["fake-small"]})
        user = await api.as_new_user(services, "dev@example.org")
        minted = await api.post("/api/profile/api-keys", headers=user, json={"name": "laptop"})
        assert minted.status_code == 201, minted.text
        sdk = openai.AsyncOpenAI(base_url=f"{api.base_url}/v1", api_key=minted.json()["key"],
                                 max_retries=0)
        yield V1(api, services, upstream, minted.json()["key"], user, sdk)
        await sdk.close()


@pytest.fixture
async def ann(api, services):
    async with ScriptedUpstream() as upstream:
        admin = await api.as_new_user(services, "boss@example.org", role="admin")
        await api.post("/api/admin/providers", headers=admin, json={
            "name": "fake", "base_url": upstream.base_url, "models": ["fake-small"]})
        caller = await new_caller(api, services, upstream, "ann@example.org")
        yield caller
        await caller.sdk.close()
