"""Tools built into the service, registered in code rather than by an administrator.

What belongs here: each built-in tool's definition and handler, and ``BUILTIN_TOOLS``,
the list ``ToolRegistry`` starts with. A handler takes the model's arguments and
returns JSON-able data or text; it raises ``ToolFailed`` with a reason the model may
read. The telephony features add their own (booking, taking a message, putting a
caller through) with ``ToolRegistry.register``.

``end_call`` is the one built-in tool of telephone calls: every call offers it,
whatever the agent's own tools (``ON_EVERY_CALL``), since only the agent knows when
a conversation is over. It records the decision in the call's ``CallContext``; the
voice session lets the answer being spoken finish, then hangs up.
"""

from __future__ import annotations

__all__ = ["BUILTIN_CALL_TOOLS", "BUILTIN_TOOLS", "CURRENT_TIME", "END_CALL", "ON_EVERY_CALL",
           "current_time", "end_call"]

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from app.services.call_context import CallContext
from core.pipeline import ToolFailed, ToolSpec

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


END_CALL = ToolSpec(
    name="end_call",
    description="End the telephone call and hang up. Use it once the caller has said "
                "goodbye or has nothing more to ask, after your farewell: what you say "
                "is played to the end first.",
    parameters={"type": "object", "properties": {}, "required": []},
    side_effecting=False,
    usable_on_call=True,
)

#: What the agent says when it ends the call without a farewell of its own.
FAREWELL_TEXT = "Thank you for calling. Goodbye."


async def end_call(arguments: dict[str, Any], call: CallContext | None) -> dict[str, Any]:
    if call is None:
        raise ToolFailed("it works only on a telephone call")
    call.end_requested = True
    return {"text": FAREWELL_TEXT, "ending": True}


BUILTIN_TOOLS = ((CURRENT_TIME, current_time),)
#: Built-in tools whose handler receives the call (``wants_call``).
BUILTIN_CALL_TOOLS = ((END_CALL, end_call),)
#: Tools every telephone call offers besides the agent's own.
ON_EVERY_CALL = (END_CALL.name,)
