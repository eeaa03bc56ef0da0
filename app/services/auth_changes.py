"""Change notices for API keys and accounts, from PostgreSQL to every server process.

Triggers on ``api_key`` (fingerprint, owner, revocation, expiry; deletion) and on
``account`` (email, role, grants, deactivation; deletion) send a notice on channel
``svc_auth_changed`` when the change commits. Each process listens on a connection of
its own and drops its ``IdentityCache`` on every notice. The cache is trusted only
while that connection is heard to listen: every ``HEARTBEAT`` it sends itself a notice,
and each one heard vouches for the cache a little longer (behind a pooler in
transaction mode LISTEN is silently lost; a connection can die without a word; an
event loop can stall). A lost connection stops the cache at once, and it starts again,
empty, once a new connection listens.

A revocation must hold on the very next request to any process, so ``change()`` does
not return on commit alone. The change's transaction carries a token
(``svc.auth_change``, which the trigger sends as the notice's payload); every listener
answers it on ``svc_auth_ack`` once its cache is dropped; ``change()`` waits until each
listener connected at commit time (found by its ``application_name`` in
``pg_stat_activity``) has answered, or ``ACK_TIMEOUT`` has passed: by then a process
that did not answer has stopped trusting its cache, since its heartbeat lapsed.
"""

from __future__ import annotations

__all__ = ["ACK_TIMEOUT", "AuthChanges", "LISTENER_NAME"]

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

log = logging.getLogger("svc.auth_changes")

CHANGED = "svc_auth_changed"
ACKS = "svc_auth_ack"
#: How a listening connection shows in ``pg_stat_activity``; set only once it listens.
LISTENER_NAME = "svc-auth-listener"
#: How long a change waits for every listener to confirm it.
ACK_TIMEOUT = 2.0
#: A listener sends itself a notice this often and must hear it within
#: ``PROBE_TIMEOUT``; the cache is trusted for ``HEARTBEAT + PROBE_TIMEOUT`` after each
#: one heard, so a process that could not confirm a change within ``ACK_TIMEOUT`` (its
#: connection silently dead, its event loop stalled) no longer trusts what it kept.
HEARTBEAT = 0.5
PROBE_TIMEOUT = 1.0
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
        self._dsn: str | None = None
        self._connection: asyncpg.Connection | None = None
        #: the listening connection's backend pid, as pg_stat_activity shows it (behind
        #: a pooler the client-side pid is the pooler's own)
        self._listener_pid = 0
        #: confirmations being sent
        self._answering: set[asyncio.Task[None]] = set()
        #: token of each change in progress -> who answered it so far
        self._answers: dict[str, _Answers] = {}

    # -- listening ---------------------------------------------------------------

    async def start(self, dsn: str) -> None:
        """Listen from now on (reconnecting as needed); returns once listening or
        after the first attempt failed (the cache stays off until one succeeds)."""
        if self._task is not None:
            return
        self._dsn = dsn
        listening = asyncio.Event()
        self._task = asyncio.create_task(self._listen(dsn, listening))
        waiter = asyncio.ensure_future(listening.wait())
        await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()

    async def stop(self) -> None:
        tasks = [self._task, *self._answering] if self._task is not None else [
            *self._answering]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
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
                if isinstance(error, TimeoutError):
                    log.warning("change notices: the listening connection stopped "
                                "answering; API keys are looked up in the database")
                elif not db.is_unavailable(error):
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
            pid = await connection.fetchval("SELECT pg_backend_pid()")
            try:
                await self._hears_itself(connection, pid)
            except TimeoutError:
                raise NoticesNotHeard("change notices do not arrive on this connection (a "
                                      "pooler in transaction mode?); every API key is "
                                      "looked up in the database") from None
            # Named only now that it listens: a change waits for exactly those
            # connections that will hear it.
            await connection.execute(f"SET application_name = '{LISTENER_NAME}'")
            self._connection, self._listener_pid = connection, pid
            log.info("change notices: listening")
            self.cache.vouch(HEARTBEAT + PROBE_TIMEOUT)
            listening.set()
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(lost.wait(), HEARTBEAT)
                if lost.is_set():
                    break
                # Every notice sent before the probe has been handled once it is heard.
                await self._hears_itself(connection, pid)
                self.cache.vouch(HEARTBEAT + PROBE_TIMEOUT)
            log.warning("change notices: connection lost; API keys are looked up "
                        "in the database until it is back")
        finally:
            self._connection = None
            self.cache.withdraw()
            if not connection.is_closed():
                connection.terminate()

    async def _hears_itself(self, connection: asyncpg.Connection, pid: int) -> None:
        """Send a notice and wait for it (``TimeoutError`` after ``PROBE_TIMEOUT``):
        behind a pooler that hands out server connections per transaction LISTEN is
        silently lost, and a connection can die without a word."""
        probe = uuid.uuid4().hex
        answers = self._answers[probe] = _Answers()
        try:
            async with asyncio.timeout(PROBE_TIMEOUT):
                await connection.execute("SELECT pg_notify($1, $2)", ACKS, f"{probe}:{pid}")
                await answers.arrived.wait()
        finally:
            del self._answers[probe]

    def _on_change(self, connection: Any, pid: int, channel: str, token: str) -> None:
        self.cache.clear()
        if token:
            task = asyncio.get_running_loop().create_task(
                self._answer(f"{token}:{self._listener_pid}"))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)

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
            async with self._hearing_answers():
                async with DB.transaction():
                    async with db.connection() as connection:
                        await connection.execute(
                            "SELECT set_config('svc.auth_change', $1, true)", token)
                    yield
                self.cache.clear()  # this process at once, whatever its listener does
                await self._propagated(answers)
        finally:
            del self._answers[token]

    @contextlib.asynccontextmanager
    async def _hearing_answers(self) -> AsyncIterator[None]:
        """Confirmations reach ``_on_ack`` from before the change commits: through
        the listening connection, or while it is down, one opened for this change."""
        if self._connection is not None:
            yield
            return
        connection = await asyncpg.connect(self._dsn or db.current_dsn())
        try:
            await connection.add_listener(ACKS, self._on_ack)
            yield
        finally:
            await connection.close()

    async def _propagated(self, answers: _Answers) -> None:
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
                # Those that did not confirm have stopped trusting their caches by now
                # (HEARTBEAT + PROBE_TIMEOUT < ACK_TIMEOUT).
                log.warning("change notices: %d of %d processes did not confirm a key or "
                            "account change within %.0f s",
                            len(listeners - answers.listeners), len(listeners), ACK_TIMEOUT)
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(answers.arrived.wait(), remaining)
