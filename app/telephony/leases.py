"""This process's lease on the calls it runs, and the ending of calls nobody runs.

Each server process holds one row in ``telephony_lease`` (its instance id, pid, host
and the address its AudioSocket listener bound, for the readiness check) and renews it
every ``RENEW_SECONDS``; a call names the process running its
audio in ``owner_instance`` (set as its ticket is redeemed, ``app.telephony.limits``).
At start and after every renewal the process ends, ``dropped``, the calls that
``core.call_leases.orphaned`` finds: those of processes whose lease is gone or lapsed,
and its own that it no longer runs because their end could not be written. Each end
is a compare-and-set on the outcome and the owner read, so a call that ended or
changed hands meanwhile is left alone, and two processes sweeping at once end a call
once. Ended calls stop counting against the limits at once, and are erased and swept
like any other.

A failed round (the database away) is logged and tried again at the next beat; the
process keeps running its calls meanwhile. A stop removes the lease, so what the
process leaves behind is ended by the next process to look, without waiting.
"""

from __future__ import annotations

__all__ = ["CallLeases"]

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from uuid import UUID, uuid4

from app import db
from app.services.background import BackgroundTask
from app.telephony.admission import DATABASE_ERRORS
from app.telephony.listener_state import ListenerState
from core.call_leases import LEASE_SECONDS, RENEW_SECONDS, RunningCall, orphaned
from core.call_outcome import CallInput, CallOutcome, transition
from core.process_listeners import ProcessListener

log = logging.getLogger("svc.telephony.leases")

_HOST = socket.gethostname()[:200]
_DROPPED = transition(CallOutcome.IN_PROGRESS, CallInput.OWNER_LOST)[1].value

_RENEW = """
INSERT INTO telephony_lease (instance_id, process_id, host, expires_at, pbx_listen)
VALUES ($1, $2, $3, now() + make_interval(secs => $4), $5)
ON CONFLICT (instance_id) DO UPDATE
SET expires_at = excluded.expires_at, pbx_listen = excluded.pbx_listen
"""
# A lapsed lease is kept a while, so the calls naming it are judged first.
_FORGET_LAPSED = "DELETE FROM telephony_lease WHERE expires_at < now() - interval '1 hour'"
_RELEASE = "DELETE FROM telephony_lease WHERE instance_id = $1"
_RUNNING = """
SELECT id, owner_instance, media_started_at FROM telephony_call
WHERE outcome = 'in_progress' AND media_started_at IS NOT NULL
"""
_LEASES = "SELECT instance_id, expires_at FROM telephony_lease"
_END = """
UPDATE telephony_call AS c SET outcome = $1, ended_at = now()
FROM unnest($2::uuid[], $3::uuid[]) AS gone (id, owner)
WHERE c.id = gone.id AND c.outcome = 'in_progress'
  AND c.owner_instance IS NOT DISTINCT FROM gone.owner
RETURNING c.id
"""


class CallLeases:
    """The lease of one process: its instance id and the calls it runs now."""

    def __init__(self, listener: ListenerState | None = None) -> None:
        self.instance_id: UUID = uuid4()
        #: this process's AudioSocket listener, whose address the lease records
        self.listener = listener or ListenerState()
        self.running: set[UUID] = set()
        #: Told of each call ended here (announcing); set by the bundle.
        self.on_end: Callable[[UUID], Awaitable[None]] | None = None
        self._heartbeat = BackgroundTask("leases")

    async def renew(self) -> None:
        async with db.connection() as connection:
            await connection.execute(_RENEW, self.instance_id, os.getpid(), _HOST,
                                     LEASE_SECONDS, self.listener.address)
            await connection.execute(_FORGET_LAPSED)

    def process_listener(self) -> ProcessListener:
        """This process and the address it listens on now."""
        return ProcessListener(_HOST, os.getpid(), self.listener.address)

    async def end_orphans(self) -> list[UUID]:
        """End the calls no process runs; returns their ids."""
        async with db.connection() as connection:
            now = await connection.fetchval("SELECT now()")
            calls = [RunningCall(row["id"], row["owner_instance"], row["media_started_at"])
                     for row in await connection.fetch(_RUNNING)]
            if not calls:
                return []
            leases = {row["instance_id"]: row["expires_at"]
                      for row in await connection.fetch(_LEASES)}
            gone = orphaned(calls, leases, now, me=self.instance_id,
                            running_here=frozenset(self.running))
            if not gone:
                return []
            ended = [row["id"] for row in await connection.fetch(
                _END, _DROPPED, [call.call_id for call in gone],
                [call.owner for call in gone])]
        if ended:
            log.warning("calls no process runs ended dropped",
                        extra={"calls": [str(call_id) for call_id in ended]})
        for call_id in ended:
            if self.on_end is not None:
                await self.on_end(call_id)
        return ended

    async def beat(self) -> None:
        """One round: renew, then end what nobody runs. Never raises for the database."""
        try:
            await self.renew()
            await self.end_orphans()
        except DATABASE_ERRORS:
            log.warning("the call lease could not be renewed; trying again")
        except Exception:  # the beat must go on, or our calls would be dropped
            log.exception("the call lease round failed; trying again")

    async def _run(self) -> None:
        while True:
            await self.beat()
            await asyncio.sleep(RENEW_SECONDS)

    def start(self) -> None:
        self._heartbeat.start(self._run)

    async def stop(self) -> None:
        if not self._heartbeat.running:
            return
        await self._heartbeat.stop()
        try:
            async with db.connection() as connection:
                await connection.execute(_RELEASE, self.instance_id)
        except DATABASE_ERRORS:
            log.warning("the call lease could not be released; it lapses by itself")
