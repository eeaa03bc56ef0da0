"""The compliance view (``GET /api/telephony/compliance``): what each line does with
callers, as its account can show an auditor.

spec: telephony.md endpoint table — "Compliance view", owner or administrator. Per
line: recording on or off and its days, the retention periods, the opening in force
as the caller will hear it (composed by ``core.voice.compose_opening``, the same
function the call speaks), whether a screening list exists and its size (never its
names), and whether notifications are on. An owner sees the lines registered to
their account; an administrator sees every line, or one account's with
``?account_id=``.

"Notifications on" means both: an administrator has switched outward notifications
on (``notifications.enabled``) and the account has at least one enabled target.
"""

from __future__ import annotations

__all__ = ["Compliance"]

from typing import Any
from uuid import UUID

from app import db
from app.services.accounts import Identity
from app.services.settings import Settings
from core.voice import STANDARD_NOTICE, compose_opening, notice_in_force

_LINES = """
SELECT l.id, l.e164, l.label, l.enabled, l.owner_user_id, l.greeting, l.notice,
       l.record_calls, l.recording_days, l.transcript_days, l.log_days,
       (SELECT count(*) FROM screening_name s WHERE s.account_id = l.owner_user_id)
           AS screening_names,
       (SELECT count(*) FROM notify_target t
        WHERE t.account_id = l.owner_user_id AND t.enabled) AS notify_targets
FROM telephony_line l
WHERE ($1::uuid IS NULL OR l.owner_user_id = $1)
ORDER BY l.e164
"""


def _line_view(row: dict[str, Any], switched_on: bool) -> dict[str, Any]:
    return {
        "line_id": str(row["id"]),
        "e164": row["e164"],
        "label": row["label"],
        "enabled": row["enabled"],
        "account_id": str(row["owner_user_id"]) if row["owner_user_id"] else None,
        "recording": {"on": row["record_calls"], "days": row["recording_days"]},
        "retention": {"transcript_days": row["transcript_days"], "log_days": row["log_days"],
                      "recording_days": row["recording_days"]},
        "opening": compose_opening(row["greeting"], row["notice"],
                                   recording=row["record_calls"]),
        "standard_notice": notice_in_force(row["notice"]) == STANDARD_NOTICE,
        "screening_list": {"exists": row["screening_names"] > 0,
                           "size": row["screening_names"]},
        "notifications": {"on": switched_on and row["notify_targets"] > 0,
                          "switched_on": switched_on,
                          "enabled_targets": row["notify_targets"]},
    }


class Compliance:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def view(self, identity: Identity, account_id: UUID | None) -> dict[str, Any]:
        """``account_id``: whose lines (already resolved by the route: the caller's own,
        or the one an administrator named); None is every line, for an administrator."""
        switched_on = bool(await self.settings.get("notifications.enabled"))
        async with db.connection() as connection:
            rows = await connection.fetch(_LINES, account_id)
        return {"data": [_line_view(dict(row), switched_on) for row in rows],
                "notifications_switched_on": switched_on}
