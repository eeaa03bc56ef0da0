"""What every loopback fake server shares: start on 127.0.0.1, stop, count connections.

A fake is a dataclass with ``host`` and ``port`` fields that inherits ``LoopbackServer``
and builds its routes in ``_app()``; ``async with Fake() as fake`` runs it.
"""

from __future__ import annotations

from typing import Self

import anyio
from aiohttp import web

__all__ = ["LoopbackServer"]


class LoopbackServer:
    host: str
    port: int
    _runner: web.AppRunner | None = None

    def _app(self) -> web.Application:
        raise NotImplementedError

    @property
    def open_connections(self) -> int:
        assert self._runner is not None and self._runner.server is not None
        return len(self._runner.server.connections)

    async def wait_open_connections(self, count: int) -> None:
        """Return once exactly ``count`` connections are open (wrap it in a timeout)."""
        while self.open_connections != count:
            await anyio.sleep(0.01)

    async def start(self) -> None:
        # handler_cancellation: a client that goes away cancels our handler, so its
        # connection leaves the open count at once instead of after a long sleep.
        self._runner = web.AppRunner(
            self._app(), handler_cancellation=True, shutdown_timeout=0.5, access_log=None
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
