"""The application served from a thread of its own, for synchronous test drivers.

Schemathesis and Hypothesis drive the server from the test's thread with blocking
calls; the application, its database pool and a fake upstream run on an event loop in
a background thread. ``LiveApp.call`` runs a coroutine on that loop (to reach
``services`` directly), ``LiveApp.stop`` ends everything the thread started.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import Any

import anyio

from tests.fakes.upstream import FakeUpstream
from tests.support.http import ApiClient, running_app
from tests.support.postgres import TestPostgres

_numbers = itertools.count()


@dataclass
class LiveApp:
    base_url: str
    services: Any
    upstream: FakeUpstream
    loop: asyncio.AbstractEventLoop

    def call(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coroutine`` on the application's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=60)


@contextlib.contextmanager
def live_app(postgres: TestPostgres, boot: Any) -> Iterator[LiveApp]:
    """Serve the application on a loopback port from a fresh database copy."""
    ready: dict[str, Any] = {}
    started, stopping = threading.Event(), None

    async def serve() -> None:
        nonlocal stopping
        from app import db
        from app.bundle import Services

        stopping = anyio.Event()
        name = f"svc_live_{os.getpid()}_{next(_numbers)}"
        db.use_database(await postgres.clone_template(name))
        await db.open_pool(max_size=10)
        try:
            services = Services.build(boot)
            services.settings.cache_seconds = 0
            async with FakeUpstream() as upstream, running_app(services) as client:
                ready["app"] = LiveApp(str(client.base_url), services, upstream,
                                       asyncio.get_running_loop())
                started.set()
                await stopping.wait()
        finally:
            await db.close_pool()
            await postgres.drop(name)

    def main() -> None:
        try:
            asyncio.run(serve())
        except BaseException as error:  # surfaced to the waiting test below
            ready["error"] = error
            started.set()

    thread = threading.Thread(target=main, name="live-app", daemon=True)
    thread.start()
    started.wait(timeout=120)
    if "app" not in ready:
        raise RuntimeError("the application did not start") from ready.get("error")
    app: LiveApp = ready["app"]
    try:
        yield app
    finally:
        app.loop.call_soon_threadsafe(stopping.set)
        thread.join(timeout=60)


async def sign_in(app: LiveApp, email: str, role: str = "user") -> dict[str, str]:
    """A new account's Authorization header (run it with ``app.call``)."""
    async with ApiClient(base_url=app.base_url, timeout=30) as client:
        return await client.as_new_user(app.services, email, role)
