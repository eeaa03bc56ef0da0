"""The diary's clock: the one place its rules read the time from, and in which zone.

``core.diary`` takes ``now`` as an argument; the app passes ``Clock.now()``. One clock
object is shared by every diary service and by the pipeline, whose local model reads a
call's days and times in the diary's zone (``Pipeline``'s ``CallClock``), so a test can
fix the time of all of them at once by replacing ``now`` on it.
"""

from __future__ import annotations

import datetime as dt
from uuid import UUID
from zoneinfo import ZoneInfo

from app.diary.diaries import diary_zone


class Clock:
    """Aware UTC time; ``zone`` is an account's diary's time zone."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)

    async def zone(self, account_id: UUID) -> ZoneInfo:
        return await diary_zone(account_id)
