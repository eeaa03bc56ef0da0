"""In-process scheduled work: the daily retention sweep at 04:15 (``0 15 4 * * *``).

Every server process runs the scheduler, but a job runs in one process only: it first
takes a PostgreSQL advisory lock with ``pg_try_advisory_lock``; a process that does not
get it skips that run. So several processes (or hosts) sharing one database sweep once.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Awaitable, Callable

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger

from app import db

log = logging.getLogger("svc.scheduler")

#: advisory lock ids, one per job (any fixed 64-bit numbers; they only need to differ)
DAILY_SWEEP_LOCK = 0x5356_4301


async def run_once_across_processes(lock_id: int, job: Callable[[], Awaitable[object]]) -> bool:
    """Run ``job`` if this process takes the lock; False when another process holds it."""
    async with db.connection() as connection:
        if not await connection.fetchval("SELECT pg_try_advisory_lock($1)", lock_id):
            return False
        try:
            await job()
        finally:
            await connection.execute("SELECT pg_advisory_unlock($1)", lock_id)
    return True


def daily_sweep_trigger() -> CronTrigger:
    # spec: telephony.md "Retention periods" — second 0, minute 15, hour 4, every day
    return CronTrigger(second=0, minute=15, hour=4, timezone=dt.timezone.utc)


def start_scheduler(sweep: Callable[[dt.datetime], Awaitable[object]]) -> AsyncIOScheduler:
    async def daily() -> None:
        try:
            ran = await run_once_across_processes(
                DAILY_SWEEP_LOCK, lambda: sweep(dt.datetime.now(dt.UTC)))
            log.info("daily sweep", extra={"ran_here": ran})
        except Exception:  # a failed sweep is retried tomorrow; the server stays up
            log.exception("daily sweep failed")

    scheduler = AsyncIOScheduler(timezone=dt.timezone.utc)
    scheduler.add_job(daily, daily_sweep_trigger(), id="daily_sweep", coalesce=True,
                      max_instances=1, misfire_grace_time=3600)
    scheduler.start()
    return scheduler
