"""In-process scheduled work: the daily retention sweep at 04:15 (``0 15 4 * * *``, the
boot setting ``retention.sweep_schedule``).

A scheduler may run in several processes (the workers of a host run it in one of
them, several hosts each in one), but each day's sweep runs once: the process whose
scheduler fires first claims the day in ``scheduled_run`` (an insert on the primary
key ``(job, slot)``), and every process whose insert finds the row skips. A claim,
not a lock held while the job runs: a lock lets a process whose scheduler fires a
moment after the sweep finished take it again and sweep twice.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Awaitable, Callable

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger

from app import db

log = logging.getLogger("svc.scheduler")

DAILY_SWEEP = "daily_sweep"

_CLAIM = """
INSERT INTO scheduled_run (job, slot) VALUES ($1, $2)
ON CONFLICT (job, slot) DO NOTHING
RETURNING true
"""


async def run_once_per_slot(job_name: str, slot: dt.date,
                            job: Callable[[], Awaitable[object]]) -> bool:
    """Run ``job`` if this process claims ``slot``; False when another one did. A job
    that fails keeps its claim: it is tried again at the next slot."""
    async with db.connection() as connection:
        claimed = await connection.fetchval(_CLAIM, job_name, slot)
    if not claimed:
        return False
    await job()
    return True


#: spec: telephony.md "Retention periods" — second 0, minute 15, hour 4, every day
DAILY_SWEEP_SCHEDULE = "0 15 4 * * *"


def daily_sweep_trigger(schedule: str = DAILY_SWEEP_SCHEDULE) -> CronTrigger:
    """``schedule``: six cron fields, seconds first, in UTC."""
    second, minute, hour, day, month, weekday = schedule.split()
    return CronTrigger(second=second, minute=minute, hour=hour, day=day, month=month,
                       day_of_week=weekday, timezone=dt.timezone.utc)


def start_scheduler(sweep: Callable[[dt.datetime], Awaitable[object]],
                    schedule: str = DAILY_SWEEP_SCHEDULE) -> AsyncIOScheduler:
    async def daily() -> None:
        now = dt.datetime.now(dt.UTC)
        try:
            ran = await run_once_per_slot(DAILY_SWEEP, now.date(), lambda: sweep(now))
            log.info("daily sweep", extra={"ran_here": ran})
        except Exception:  # a failed sweep is retried tomorrow; the server stays up
            log.exception("daily sweep failed")

    scheduler = AsyncIOScheduler(timezone=dt.timezone.utc)
    scheduler.add_job(daily, daily_sweep_trigger(schedule), id="daily_sweep", coalesce=True,
                      max_instances=1, misfire_grace_time=3600)
    scheduler.start()
    return scheduler
