"""The diary's clock: the one place its rules read the time from.

``core.diary`` takes ``now`` as an argument; the app passes ``Clock.now()``. One clock
object is shared by every diary service, so a test can fix the time of all of them
at once by replacing ``now`` on it.
"""

from __future__ import annotations

import datetime as dt


class Clock:
    """Aware UTC time."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)
