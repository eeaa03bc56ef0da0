"""Change notices for API keys and accounts, from PostgreSQL to every server process.

Triggers on ``api_key`` (fingerprint, owner, revocation, expiry; deletion) and on
``account`` (email, role, grants, deactivation; deletion) send a notice on channel
``svc_auth_changed`` when the change commits. Each process listens on a connection of
its own and drops its ``IdentityCache`` on every notice. The cache is live only while
that connection listens, and only once it has heard a notice of its own (behind a
pooler in transaction mode LISTEN is silently lost): a lost connection stops the cache
at once, and it starts again, empty, once a new connection listens.

A revocation must hold on the very next request to any process, so ``change()`` does
not return on commit alone. The change's transaction carries a token
(``svc.auth_change``, which the trigger sends as the notice's payload); every listener
answers it on ``svc_auth_ack`` once its cache is dropped; ``change()`` waits until each
listener connected at commit time (found by its ``application_name`` in
``pg_stat_activity``) has answered, or ``ACK_TIMEOUT`` has passed (a process stopped
in a debugger; its entries still age out, see ``IdentityCache``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from app import db
from app.piccolo_conf import DB
from app.services.identity_cache import IdentityCache

__all__ = ["ACK_TIMEOUT", "AuthChanges", "LISTENER_NAME"]

log = logging.getLogger("svc.auth_changes")

CHANGED = "svc_auth_changed"
ACKS = "svc_auth_ack"
#: How a listening connection shows in ``pg_stat_activity``; set only once it listens.
LISTENER_NAME = "svc-auth-listener"
ACK_TIMEOUT = 2.0
#: Waits between attempts to listen again after the connection was lost.
RETRY_DELAYS = (0.2, 0.5, 1.0, 2.0, 5.0)
#: ... and after a connection that did not hear its own notice.
NOT_HEARD_RETRY = 60.0

_LISTENERS = """
SELECT pid FROM pg_stat_activity
WHERE application_name = $1 AND datname = current_database()
"""


class NoticesNotHeard(Exception):
    """A listening connection did not hear its own notice."""


@dataclass
class _Answers:
    #: backend pids of the listeners that confirmed a change
    listeners: set[int] = field(default_factory=set)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)


class AuthChanges:
    def __init__(self, cache: IdentityCache[Any]) -> None:
        self.cache = cache
        self._task: asyncio.Task[None] | None = None
        self._connection: asyncpg.Connection | None = None
        #: token of each change in progress -> who answered it so far
        self._answers: dict[str, _Answers] = {}

    # -- listening ---------------------------------------------------------------

    async def start(self, dsn: str) -> None:
        """Listen from now on (reconnecting as needed); returns once listening or
        after the first attempt failed (the cache stays off until one succeeds)."""
        listening = asyncio.Event()
        self._task = asyncio.create_task(self._listen(dsn, listening))
        waiter = asyncio.ensure_future(listening.wait())
        await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _listen(self, dsn: str, listening: asyncio.Event) -> None:
        failures = 0
        while True:
            try:
                await self._listen_once(dsn, listening)
                failures = 0
            except Exception as error:  # noqa: BLE001 - any failure: try again later
                listening.set()  # start() returns; the cache stays off meanwhile
                if isinstance(error, NoticesNotHeard):
                    log.warning("%s", error)
                    await asyncio.sleep(NOT_HEARD_RETRY)  # not soon better by itself
                    continue
                if not db.is_unavailable(error):
                    log.exception("change notices: listening failed")
                delay = RETRY_DELAYS[min(failures, len(RETRY_DELAYS) - 1)]
                failures += 1
                await asyncio.sleep(delay)

    async def _listen_once(self, dsn: str, listening: asyncio.Event) -> None:
        connection = await asyncpg.connect(dsn)
        lost = asyncio.Event()
        connection.add_termination_listener(lambda _: lost.set())
        try:
            await connection.add_listener(CHANGED, self._on_change)
            await connection.add_listener(ACKS, self._on_ack)
            await self._hears_itself(connection)
            # Named only now that it listens: a change waits for exactly those
            # connections that will hear it.
            await connection.execute(f"SET application_name = '{LISTENER_NAME}'")
            self._connection = connection
            self.cache.live = True
            log.info("change notices: listening")
            listening.set()
            await lost.wait()
            log.warning("change notices: connection lost; API keys are looked up "
                        "in the database until it is back")
        finally:
            self._connection = None
            self.cache.live = False
            if not connection.is_closed():
                connection.terminate()

    async def _hears_itself(self, connection: asyncpg.Connection) -> None:
        """Send a notice and wait for it: behind a pooler that hands out server
        connections per transaction, LISTEN is silently lost, and a cache trusted then
        would outlive revocations."""
        probe = uuid.uuid4().hex
        answers = self._answers[probe] = _Answers()
        try:
            await connection.execute("SELECT pg_notify($1, $2)", ACKS,
                                     f"{probe}:{connection.get_server_pid()}")
            try:
                await asyncio.wait_for(answers.arrived.wait(), ACK_TIMEOUT)
            except TimeoutError:
                raise NoticesNotHeard("change notices do not arrive on this connection (a "
                                      "pooler in transaction mode?); every API key is "
                                      "looked up in the database") from None
        finally:
            del self._answers[probe]

    def _on_change(self, connection: Any, pid: int, channel: str, token: str) -> None:
        self.cache.clear()
        if token:
            ack = f"{token}:{connection.get_server_pid()}"
            asyncio.get_running_loop().create_task(self._answer(ack))

    @staticmethod
    async def _answer(ack: str) -> None:
        try:
            async with db.connection() as connection:
                await connection.execute("SELECT pg_notify($1, $2)", ACKS, ack)
        except Exception as error:  # noqa: BLE001 - the change waits, then goes on
            log.warning("change notices: could not answer %s: %s", ack, error)

    def _on_ack(self, connection: Any, pid: int, channel: str, payload: str) -> None:
        token, _, listener = payload.rpartition(":")
        answers = self._answers.get(token)
        if answers is not None and listener.isdigit():
            answers.listeners.add(int(listener))
            answers.arrived.set()

    # -- changing ----------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def change(self) -> AsyncIterator[None]:
        """A transaction for changing keys or accounts that returns once every
        process has dropped what it kept (see the module's docstring)."""
        token = uuid.uuid4().hex
        answers = self._answers[token] = _Answers()
        try:
            async with DB.transaction():
                async with db.connection() as connection:
                    await connection.execute(
                        "SELECT set_config('svc.auth_change', $1, true)", token)
                yield
            self.cache.clear()  # this process at once, whatever the listener does
            await self._propagated(answers)
        finally:
            del self._answers[token]

    async def _propagated(self, answers: _Answers) -> None:
        if self._connection is None:
            return  # not listening: answers could not be heard; others still drop theirs
        async with db.connection() as connection:
            listeners = {row["pid"] for row in await connection.fetch(_LISTENERS, LISTENER_NAME)}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ACK_TIMEOUT
        while True:
            answers.arrived.clear()  # before looking: an answer from now on sets it
            if listeners <= answers.listeners:
                return
            remaining = deadline - loop.time()
            if remaining <= 0:
                log.warning("change notices: %d of %d processes did not confirm a key or "
                            "account change within %.0f s",
                            len(listeners - answers.listeners), len(listeners), ACK_TIMEOUT)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(answers.arrived.wait(), remaining)
