"""Waiting for the usage event of a request the client walked away from: the server
records it once the abandoned stream winds down, a moment after the client has gone."""

from __future__ import annotations

__all__ = ["usage_recorded"]

import asyncio

from app.bundle import Services
from app.tables import UsageEvent


async def usage_recorded(services: Services) -> None:
    """Drain the usage queue until an event is stored (about two seconds at most; the
    test's own assertion then says what is missing)."""
    for _ in range(100):
        await services.usage.drain()
        if await UsageEvent.count():
            return
        await asyncio.sleep(0.02)
