"""The AudioSocket listener of this process: bound once, at start, on ``telephony.pbx_listen``.

spec: telephony.md "Setup: own-telephone-system transport" — the listen address is
bound only at process start; empty opens no port. :meth:`AudioListener.start` reads
the setting when the application starts, binds it (a bad address or a taken port is
logged and leaves the process not listening, which the readiness check reports), and
serves connections in the background through ``adapters.voice.audiosocket``;
:meth:`AudioListener.stop` closes it with the application, ending the calls on it.
In a serving process (``collect_on_beat``) the listener also makes the process's
garbage-collection schedule as it starts and gives it to the event loop's frame
ticker, which every call's player joins, carrier calls included
(``adapters.voice.collection``); it closes the schedule as it stops.
``ListenerState`` records the address for the settings resource and the readiness
check.
"""

from __future__ import annotations

__all__ = ["AudioListener", "BoundListener"]

import logging
import socket

from anyio.abc import SocketListener

from adapters.voice.audiosocket import bind_audiosocket, serve_audiosockets
from adapters.voice.collection import CollectionSchedule, NoSchedule
from adapters.voice.pacing import frame_ticker
from app.services.background import BackgroundTask
from app.services.settings import Settings
from app.telephony.admission import DATABASE_ERRORS
from app.telephony.listener_state import ListenerState
from app.telephony.voice import CallVoice
from core.host_port import InvalidHostPort, parse_host_port

#: ``telephony.pbx_listen`` and the socket bound on it (None: it could not be bound).
BoundListener = tuple[str, socket.socket | None]

log = logging.getLogger("svc.telephony")


def bind_for_workers(address: str | None) -> BoundListener | None:
    """Bind ``telephony.pbx_listen`` once for every worker (None when it is empty). A
    bad address or a taken port is logged, and no worker listens, as in one process."""
    if not address:
        return None
    try:
        host, port = parse_host_port(address)
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.create_server((host, port), family=family, backlog=2048)
    except (InvalidHostPort, OSError) as exc:
        log.error("cannot listen for the telephone system on %s: %s", address, exc)
        return address, None
    log.info("listening for the telephone system on %s", address)
    return address, sock


class AudioListener:
    """``bound``: in a worker of ``svc serve --workers N``, the address and the socket
    the supervisor bound at start for every worker (None when it could not bind it);
    the worker serves that socket and binds nothing itself. ``collect_on_beat``: run
    the process's garbage collections on the calls' beat (a long-running server only:
    a test process would keep what the schedule froze while it ran)."""

    def __init__(self, settings: Settings, state: ListenerState, voice: CallVoice,
                 bound: BoundListener | None = None, *, collect_on_beat: bool = False) -> None:
        self.settings = settings
        self.state = state
        self.voice = voice
        self.bound = bound
        self.collect_on_beat = collect_on_beat
        self.collection: CollectionSchedule | NoSchedule = NoSchedule()
        self._serving = BackgroundTask()

    async def start(self) -> None:
        """Bind ``telephony.pbx_listen`` if set and serve it in the background."""
        if self.collect_on_beat:
            # Before any call: every call's player joins the loop's ticker.
            self.collection = CollectionSchedule()
            self.collection.freeze_start_up()
            frame_ticker().collect_with(self.collection)
        if self.bound is not None:
            await self._serve_bound(self.bound)
            return
        try:
            address = await self.settings.get("telephony.pbx_listen")
        except DATABASE_ERRORS:
            log.exception("the listen address could not be read; not listening")
            return
        if not address:
            return
        try:
            listener = await bind_audiosocket(address)
        except (InvalidHostPort, OSError) as exc:
            log.error("cannot listen for the telephone system on %s: %s", address, exc)
            return
        log.info("listening for the telephone system on %s", address)
        self._serve(address, listener)

    async def _serve_bound(self, bound: BoundListener) -> None:
        address, sock = bound
        if sock is not None:
            # A duplicate: this worker's listener owns and closes it, the supervisor
            # keeps the socket for the workers it starts later.
            self._serve(address, await SocketListener.from_socket(sock.dup()))

    def _serve(self, address: str, listener: SocketListener) -> None:
        self.state.bound(address)
        self._serving.start(
            lambda: serve_audiosockets(listener, self.voice.redeem, self.voice.answer))

    async def stop(self) -> None:
        await self._serving.stop()
        self.state.closed()
        if self.collect_on_beat:
            collection, self.collection = self.collection, NoSchedule()
            frame_ticker().collect_with(self.collection)
            collection.close()
