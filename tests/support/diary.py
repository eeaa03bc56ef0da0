"""The diary most tests book in, and the moment they book at."""

from __future__ import annotations

import datetime as dt

# A Tuesday; the diary below opens Monday to Friday 09:00-12:00 and 13:00-17:00.
NOW = dt.datetime(2027, 3, 2, 8, 0, tzinfo=dt.UTC)
WEEKDAY_HOURS = [{"weekday": d, "opens_minute": o, "closes_minute": c}
                 for d in range(5) for o, c in ((540, 720), (780, 1020))]
LONDON_DIARY = {"timezone": "Europe/London", "slot_minutes": 30, "lead_minutes": 60,
                "horizon_days": 30, "enabled": True, "hours": WEEKDAY_HOURS}
