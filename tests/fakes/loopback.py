"""What every loopback fake server shares: start on 127.0.0.1, stop, count connections.

A fake is a dataclass that inherits ``LoopbackServer`` (and with it the ``host`` and
``port`` fields) and builds its routes in ``_app()``; ``async with Fake() as fake`` runs it.
``serve_as_process`` runs one as a whole process (``python -m tests.fakes.…``).
"""

from __future__ import annotations

__all__ = ["LoopbackServer", "serve_as_process"]

import asyncio
import contextlib
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self

import anyio
from aiohttp import web


@dataclass
class LoopbackServer:
    host: str = "127.0.0.1"
    #: 0 picks a free port; the one bound is written back on start
    port: int = 0
    _runner: web.AppRunner | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def base_url(self) -> str:
        """The root of the OpenAI-shaped API the fakes serve."""
        return f"http://{self.host}:{self.port}/v1"

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


def interrupted_by_stop_signals() -> None:
    """Make an interrupt or a SIGTERM end this process with ``KeyboardInterrupt``,
    whatever it inherited: a process started by one that ignores interrupts (or has
    them blocked) would otherwise ignore them too, and never end."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def serve_as_process(fake: LoopbackServer,
                     loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None) -> None:
    """Serve ``fake`` until the process is interrupted, having printed ``listening on
    <port>`` once ready (the parent that started it reads the port there)."""

    async def serve() -> None:
        async with fake:
            print(f"listening on {fake.port}", flush=True)
            await anyio.sleep_forever()

    interrupted_by_stop_signals()
    with contextlib.suppress(KeyboardInterrupt):
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(serve())
