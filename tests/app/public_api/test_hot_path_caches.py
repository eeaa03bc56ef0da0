"""The per-second caches on the /v1 hot path: requests arriving together while one is
being read again use the last values instead of each running the same query."""

from __future__ import annotations

import anyio
import pytest

from tests.app.services.test_pipeline import add_account, add_fake_provider
from tests.fakes.upstream import FakeUpstream

pytestmark = pytest.mark.anyio


async def together(count: int, call) -> list:
    results: list = []

    async def one() -> None:
        results.append(await call())

    async with anyio.create_task_group() as tasks:
        for _ in range(count):
            tasks.start_soon(one)
    return results


async def test_settings_read_again_once_for_requests_arriving_together(services, monkeypatch):
    settings = services.settings
    await settings.snapshot()  # something to fall back on
    reads = []
    original = settings._read_overrides

    async def counted(now):
        reads.append(now)
        await anyio.sleep(0.05)  # a slow database: the others arrive meanwhile
        return await original(now)

    monkeypatch.setattr(settings, "_read_overrides", counted)
    settings.cache_seconds = 0  # always stale
    snapshots = await together(20, settings.snapshot)
    assert len(reads) == 1 and len(snapshots) == 20
    await settings.snapshot()  # once nobody reads, the next request reads again
    assert len(reads) == 2


async def test_a_model_is_looked_up_again_once_for_requests_arriving_together(services,
                                                                              monkeypatch):
    async with FakeUpstream() as fake:
        owner = await add_account(services)
        await add_fake_provider(services, fake, owner)
        providers = services.providers
        first = await providers.resolve("fake-small", owner)
        lookups: list = []
        monkeypatch.setattr(providers, "cache_seconds", 0)
        monkeypatch.setattr(providers, "_resolved", _Counting(providers._resolved, lookups))
        answers = await together(20, lambda: providers.resolve("fake-small", owner))
        assert {a.provider for a in answers} == {first.provider}
        assert lookups == [("fake-small", owner)]


class _Counting(dict):
    """The cache, noting each key written: one write per database lookup."""

    def __init__(self, data, writes):
        super().__init__(data)
        self.writes = writes

    def __setitem__(self, key, value):
        self.writes.append(key)
        super().__setitem__(key, value)
