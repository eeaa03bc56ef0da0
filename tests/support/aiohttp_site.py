"""Serving a fake's aiohttp application on a free port of 127.0.0.1 for one test."""

from __future__ import annotations

__all__ = ["serving"]

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web


@asynccontextmanager
async def serving(app: web.Application, **runner_options: Any) -> AsyncIterator[int]:
    """Serve ``app`` until the block ends; yields the port it listens on.
    ``runner_options`` go to ``web.AppRunner`` (e.g. ``access_log=None``)."""
    runner = web.AppRunner(app, **runner_options)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield site._server.sockets[0].getsockname()[1]
    finally:
        await runner.cleanup()
