"""The outbox worker: posts the notifications events wrote, in the server process.

spec: telephony.md "Outward notifications" — "Deciding to notify and posting are
separate: the call never waits, and a failing destination is retried." "Nothing is
sent until an administrator switches outward notifications on." "Every attempt passes
the same egress gate as other connectors and is recorded."

How rows move:

* Every server process runs one worker. It claims a batch of due ``pending`` rows
  with ``FOR NO KEY UPDATE SKIP LOCKED`` and keeps them locked while it posts them,
  so two processes never post one row at the same time. (``NO KEY``: the attempts,
  written on another connection, reference the row, and the key-share lock their
  foreign key takes must not wait for our own claim.) If the process dies, PostgreSQL
  drops the locks with its connection, the row is still ``pending``, and the next
  worker posts it again under the same ``Idempotency-Key``: a receiver that keeps the
  keys it has seen drops the repeat.
* News of one subject reaches a target in order: a row waits while an earlier row of
  the same subject for the same target is still pending (a booking being retried is
  not overtaken by its cancellation). Other subjects are not held up.
* Each attempt is recorded (``app.notify.attempts``) before and after the post.
* A 2xx answer delivers. A failure worth repeating (``is_retryable``) waits by the
  retry schedule (``next_attempt_delay``: 30 s doubling to an hour, ten attempts);
  anything else — the egress gate's refusal, a 4xx, an address that cannot be
  unsealed, no attempt left — fails for good.
* While ``notifications.enabled`` is off, due rows are marked ``suppressed`` and
  nothing is posted: switching notifications on later does not send a backlog of old
  news. A row whose target was switched off meanwhile is suppressed too.
"""

from __future__ import annotations

__all__ = ["OutboxWorker"]

import asyncio
import logging
import random
import time
from collections.abc import Callable, Collection
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import anyio

from adapters.notify_sender import NotificationSender, PostResult, Result
from app import db
from app.crypto import SecretBox
from app.notify.attempts import UNREADABLE, finish_attempt, start_attempt
from app.notify.targets import open_target
from app.services.background import BackgroundTask
from app.services.settings import Settings
from core.notifications import (
    EventKind,
    OutgoingRequest,
    TargetKind,
    build_request,
    is_retryable,
    next_attempt_delay,
)

log = logging.getLogger("svc.notify")

_CLAIM = """
    SELECT o.id, o.target_id, o.event, o.text, o.subject_id, o.idempotency_key,
           o.attempts, o.created_at, t.kind, t.url_enc, t.secret_enc, t.enabled
    FROM notify_outbox o JOIN notify_target t ON t.id = o.target_id
    WHERE o.status = 'pending' AND o.next_attempt_at <= now()
      AND NOT EXISTS (
          SELECT 1 FROM notify_outbox earlier
          WHERE earlier.target_id = o.target_id AND earlier.subject_id = o.subject_id
            AND earlier.status = 'pending'
            AND (earlier.created_at, earlier.id) < (o.created_at, o.id))
    ORDER BY o.next_attempt_at, o.id
    LIMIT $1
    FOR NO KEY UPDATE OF o SKIP LOCKED
"""

_FINISH = """
    UPDATE notify_outbox SET status = $2, attempts = $3, last_error = $4,
           finished_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END,
           next_attempt_at = now() + make_interval(secs => $5)
    WHERE id = $1
"""

#: What the webhook body names the event's subject by.
_SUBJECT_NAMES = {EventKind.MESSAGE_TAKEN: "enquiry_id"}

Schedule = Callable[[int, float], float | None]


def _request(row: dict[str, Any], secret: bytes | None) -> OutgoingRequest:
    event = EventKind(row["event"])
    ids = {}
    if row["subject_id"] is not None:
        ids[_SUBJECT_NAMES.get(event, "appointment_id")] = str(row["subject_id"])
    return build_request(TargetKind(row["kind"]), event, row["text"], ids=ids,
                         idempotency_key=row["idempotency_key"],
                         occurred_at=row["created_at"], timestamp=int(time.time()),
                         secret=secret)


@dataclass(eq=False)
class OutboxWorker:
    """``run_once`` posts one batch; ``start``/``stop`` run it in the background."""

    settings: Settings
    box: SecretBox
    sender: NotificationSender
    _: KW_ONLY
    batch_size: int = 10
    poll_seconds: float = 2.0
    schedule: Schedule = next_attempt_delay
    jitter: Callable[[], float] = random.random
    _posting: BackgroundTask = field(default_factory=lambda: BackgroundTask("outbox"),
                                     init=False, repr=False)

    async def run_once(self) -> int:
        """Claim the due rows this process can have now and settle each; the count.
        The batch is posted at once, so one slow receiver does not hold up the others;
        at most one row of a subject per target is in a batch (``_CLAIM``)."""
        enabled = await self.settings.get("notifications.enabled")
        allow_hosts = await self.settings.egress_allow_hosts()
        async with db.connection() as connection:
            async with connection.transaction():
                rows = [dict(row) for row in await connection.fetch(_CLAIM, self.batch_size)]
                settled: dict[Any, tuple[str, int, str | None, float]] = {}

                async def settle(row: dict[str, Any]) -> None:
                    settled[row["id"]] = await self._attempt(row, enabled, allow_hosts)

                async with anyio.create_task_group() as posts:
                    for row in rows:
                        posts.start_soon(settle, row)
                for row in rows:
                    await connection.execute(_FINISH, row["id"], *settled[row["id"]])
        return len(rows)

    async def _attempt(self, row: dict[str, Any], enabled: bool,
                       allow_hosts: Collection[str]) -> tuple[str, int, str | None, float]:
        """Post one row (unless it is to be suppressed): its new status, attempt count,
        error and seconds until the next attempt."""
        if not enabled or not row["enabled"]:
            why = "outward notifications were off" if not enabled else "the target was off"
            return "suppressed", row["attempts"], why, 0.0
        attempt_id, attempts = await start_attempt(row["target_id"], row["id"])
        url, secret = open_target(self.box, row)
        if url is None:
            result = UNREADABLE
        else:
            result = await self.sender.post(url, _request(row, secret), allow_hosts)
        await finish_attempt(attempt_id, result)
        status, delay = self._next(result, attempts)
        return status, attempts, None if status == "delivered" else result.detail, delay

    def _next(self, result: PostResult, attempts: int) -> tuple[str, float]:
        """The row's status after an attempt, and the seconds until the next one."""
        if result.result is Result.DELIVERED:
            return "delivered", 0.0
        if result.result is Result.REFUSED or result is UNREADABLE:
            return "failed", 0.0
        delay = self.schedule(attempts, self.jitter()) if is_retryable(result.status) else None
        return ("failed", 0.0) if delay is None else ("pending", delay)

    async def run(self) -> None:
        """Post batches until cancelled; sleep between polls when nothing is due."""
        while True:
            try:
                handled = await self.run_once()
            except Exception:  # the database went away a moment: try again next poll
                log.exception("outbox run failed")
                handled = 0
            if handled < self.batch_size:
                await asyncio.sleep(self.poll_seconds)

    @property
    def running(self) -> bool:
        return self._posting.running

    def start(self) -> None:
        self._posting.start(self.run)

    async def stop(self) -> None:
        await self._posting.stop()
