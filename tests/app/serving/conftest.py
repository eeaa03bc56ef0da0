"""Fixtures of the tests that run the service as it runs in production."""

from __future__ import annotations

import anyio
import pytest

from adapters.embedded_postgres import EmbeddedPostgres
from app import db
from tests.app.serving.rig import Rig
from tests.app.telephony.deployment import deployment
from tests.fakes.upstream import FakeUpstream
from tests.support.http import running_app
from tests.support.settings import set_runtime


@pytest.fixture
async def rig(tmp_path_factory, boot):
    """The service on its own PostgreSQL: a line switched on, the fake provider, an API key."""
    from app.bundle import Services

    # Not under the test's own directory: PostgreSQL's socket is made in its data
    # directory, and a socket's path is at most 107 bytes, which the test's name and a
    # worker's directory (pytest-xdist) would pass.
    server = EmbeddedPostgres(tmp_path_factory.mktemp("pg") / "own")
    db.use_database(await anyio.to_thread.run_sync(server.start))
    await db.migrate()
    await db.open_pool(max_size=10)
    services = Services.build(boot)  # settings cached for a second, as in production
    try:
        async with FakeUpstream() as upstream, running_app(services) as api:
            setup = await deployment(api, services)
            await set_runtime(services, "api.rate_per_min", 1_000_000)
            await api.post("/api/admin/providers", headers=setup.admin, json={
                "name": "fake", "base_url": upstream.base_url, "models": ["fake-small"]})
            minted = await api.post("/api/profile/api-keys", headers=setup.owner,
                                    json={"name": "k"})
            yield Rig(server, api, services, {"Authorization": f"Bearer {minted.json()['key']}"},
                      setup.owner)
    finally:
        await services.usage.drain()
        await db.close_pool()
        await anyio.to_thread.run_sync(server.stop)
