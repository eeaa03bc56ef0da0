"""Tools built into the service, registered in code rather than by an administrator.

What belongs here: each built-in tool's definition and handler, and ``BUILTIN_TOOLS``,
the list ``ToolRegistry`` starts with. A handler takes the model's arguments and
returns JSON-able data or text; it raises ``ToolFailed`` with a reason the model may
read. The telephony features add their own (booking, taking a message, putting a
caller through) with ``ToolRegistry.register``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from core.pipeline import ToolFailed, ToolSpec

__all__ = ["BUILTIN_TOOLS", "CURRENT_TIME", "current_time"]

CURRENT_TIME = ToolSpec(
    name="current_time",
    description="The current date and time in a timezone. Use it whenever the answer "
                "depends on today's date or the time of day.",
    parameters={
        "type": "object",
        "properties": {"timezone": {
            "type": "string",
            "description": "IANA timezone name, e.g. Europe/London; UTC when not given"}},
        "required": [],
    },
    side_effecting=False,
)


async def current_time(arguments: dict[str, Any]) -> dict[str, str]:
    name = arguments.get("timezone") or "UTC"
    if not isinstance(name, str):
        raise ToolFailed("timezone must be a string such as Europe/London")
    try:
        zone = ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder name
        raise ToolFailed(f"{name!r} is not a known timezone; use a name like Europe/London")
    now = dt.datetime.now(zone)
    return {"timezone": name, "local_time": now.isoformat(timespec="seconds"),
            "weekday": now.strftime("%A"),
            "text": f"It is {now:%H:%M} on {now:%A} {now.day} {now:%B %Y} in {name}."}


BUILTIN_TOOLS = ((CURRENT_TIME, current_time),)
