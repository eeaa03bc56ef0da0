"""The AudioSocket listener of this process: bound once, at start, on ``telephony.pbx_listen``.

spec: telephony.md "Setup: own-telephone-system transport" — the listen address is
bound only at process start; empty opens no port. :meth:`AudioListener.start` reads
the setting when the application starts, binds it (a bad address or a taken port is
logged and leaves the process not listening, which the readiness check reports), and
serves connections in the background through ``adapters.voice.audiosocket``;
:meth:`AudioListener.stop` closes it with the application, ending the calls on it.
``ListenerState`` records the address for the settings resource and the readiness
check.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from adapters.voice.audiosocket import InvalidListenAddress, bind_audiosocket, serve_audiosockets
from app.services.settings import Settings
from app.telephony.admission import DATABASE_ERRORS
from app.telephony.listener_state import ListenerState
from app.telephony.voice import CallVoice

__all__ = ["AudioListener"]

log = logging.getLogger("svc.telephony")


class AudioListener:
    def __init__(self, settings: Settings, state: ListenerState, voice: CallVoice) -> None:
        self.settings = settings
        self.state = state
        self.voice = voice
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Bind ``telephony.pbx_listen`` if set and serve it in the background."""
        try:
            address = await self.settings.get("telephony.pbx_listen")
        except DATABASE_ERRORS:
            log.exception("the listen address could not be read; not listening")
            return
        if not address:
            return
        try:
            listener = await bind_audiosocket(address)
        except (InvalidListenAddress, OSError) as exc:
            log.error("cannot listen for the telephone system on %s: %s", address, exc)
            return
        self.state.bound(address)
        log.info("listening for the telephone system on %s", address)
        self._task = asyncio.get_running_loop().create_task(
            serve_audiosockets(listener, self.voice.redeem, self.voice.answer))

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.state.closed()
