"""The daily sweep: API conversation retention, and one runner across processes."""

import asyncio
import datetime as dt

import pytest

from app.config import ConfigError, load
from app.scheduler import daily_sweep_trigger, run_once_per_slot
from app.tables import Account, Chat
from tests.support.settings import set_runtime

pytestmark = pytest.mark.anyio


async def _chat(source: str, age_days: float) -> None:
    owner = await Account.select(Account.id).first()
    created = dt.datetime.now(dt.UTC) - dt.timedelta(days=age_days)
    await Chat.insert(Chat(owner_id=owner["id"], source=source, created_at=created))


async def test_api_conversations_older_than_the_period_are_deleted(services):
    await services.accounts.create("ann@example.org", "long enough pw")
    await _chat("api", 10)
    await _chat("api", 1)
    await _chat("app", 10)
    assert (await services.retention.sweep(dt.datetime.now(dt.UTC)))["api_chats"] == 0
    await set_runtime(services, "api.chat_retention_days", 5)
    counts = await services.retention.sweep(dt.datetime.now(dt.UTC))
    assert counts["api_chats"] == 1
    remaining = await Chat.select(Chat.source)
    assert sorted(r["source"] for r in remaining) == ["api", "app"]
    audited = await services.audit.query(kind="retention.swept")
    assert audited and "api_chats" in str(audited[0]["data"])


async def test_each_days_sweep_runs_once_however_many_processes_fire(database):
    runs = []

    async def job():
        runs.append(1)
        await asyncio.sleep(0.05)

    day = dt.date(2026, 3, 1)
    # Several schedulers firing together, and one firing after the sweep finished
    # (a lock held only while the job runs would let that one sweep again).
    together = await asyncio.gather(*[run_once_per_slot("sweep", day, job) for _ in range(4)])
    late = await run_once_per_slot("sweep", day, job)
    assert sorted(together) == [False, False, False, True] and late is False
    assert len(runs) == 1
    assert await run_once_per_slot("sweep", day + dt.timedelta(days=1), job) is True
    assert await run_once_per_slot("another job", day, job) is True
    assert len(runs) == 3


def test_the_sweep_runs_daily_at_04_15():
    trigger = daily_sweep_trigger()
    start = dt.datetime(2026, 1, 1, 5, 0, tzinfo=dt.timezone.utc)
    fire = trigger.get_next_fire_time(None, start)
    assert (fire.hour, fire.minute, fire.second, fire.day) == (4, 15, 0, 2)


def test_the_sweep_schedule_is_a_boot_setting_of_six_fields():
    trigger = daily_sweep_trigger(load({"SVC__RETENTION__SWEEP_SCHEDULE": "*/2 * * * * *"})[
        "retention.sweep_schedule"])
    start = dt.datetime(2026, 1, 1, 5, 0, 1, tzinfo=dt.timezone.utc)
    assert trigger.get_next_fire_time(None, start) == start + dt.timedelta(seconds=1)
    assert load({})["retention.sweep_schedule"] == "0 15 4 * * *"
    with pytest.raises(ConfigError, match="six cron fields"):
        load({"SVC__RETENTION__SWEEP_SCHEDULE": "15 4 * * *"})
