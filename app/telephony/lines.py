"""Lines (``/api/admin/telephony/numbers``): registered numbers, each bound to an agent
and an account.

spec: telephony.md "Line (registered number)" gives every field and rule, and "Line"
under "States and transitions" the life of a line: a new line is switched off;
enabling needs a valid binding; DELETE releases it for good while its calls stay in
the log (calls keep copies of ``number_id`` and ``e164``).

A PATCH keeps absent fields; an explicit null clears ``notice`` (the standard wording
applies again), ``deliver_group_chat_id`` (announcing stops), ``transfer_e164``
(transferring stops), and the free-text ``label`` and ``greeting``. Every rule is
checked on the line as it would be after the change, before anything is written.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from uuid import UUID

import asyncpg

from app import db
from app.errors import Conflict, NotFound, Unprocessable
from app.services.access import parse_id
from app.services.accounts import Identity
from app.services.audit import AuditLog
from app.services.settings import Settings
from app.services.views import view_of
from app.tables import Account, Agent, Chat, TelephonyLine
from core.phone_numbers import InvalidPhoneNumber, normalise_e164
from core.voice import STANDARD_NOTICE  # spec: "Opening of every call" — the standard wording
MAX_NOTICE = 600  # spec: "Limits" — Notice, 600 characters
MAX_DAYS = 3650  # spec: "Limits" — any retention period
MAX_LABEL, MAX_GREETING = 200, 1000
PERIODS = ("transcript_days", "log_days", "recording_days")
CLEARABLE = ("label", "greeting", "notice", "deliver_group_chat_id", "transfer_e164")
ADMIN_OWNER_WARNING = ("This line is registered to an administrator's account. A caller "
                       "reaches what the account reaches, and an administrator reads every "
                       "Library: register lines to an ordinary account.")

_SELECT = """
SELECT l.*, coalesce(cardinality(a.tools), 0) AS agent_tool_count, o.role AS owner_role
FROM telephony_line l
LEFT JOIN agent a ON a.id = l.agent_id
LEFT JOIN account o ON o.id = l.owner_user_id
"""
# spec: telephony.md "Retention periods" — a released line's calls stay in the log and
# are still swept by the line's periods.
_KEEP_PERIODS = """
UPDATE telephony_call c
SET transcript_days = l.transcript_days, log_days = l.log_days,
    recording_days = l.recording_days
FROM telephony_line l WHERE l.id = $1 AND c.number_id = l.id
"""


#: The columns a line is shown with as they are stored.
_LINE_COLUMNS = (
    "id", "e164", "agent_id", "owner_user_id", "provider", "label", "greeting", "notice",
    "transcript_days", "log_days", "record_calls", "recording_days", "enabled",
    "deliver_group_chat_id", "transfer_e164", "agent_tool_count", "created_at", "updated_at",
)


def line_view(row: dict[str, Any]) -> dict[str, Any]:
    view = view_of(row, _LINE_COLUMNS)
    view["notice_in_force"] = row["notice"] or STANDARD_NOTICE
    if row["owner_role"] in ("admin", "superadmin"):
        view["warning"] = ADMIN_OWNER_WARNING
    return view


def _number(field: str, value: str, region: str | None) -> str:
    try:
        return normalise_e164(value, region)
    except InvalidPhoneNumber as exc:
        raise Unprocessable(str(exc), code="invalid_number", field=field) from None


def _uuid(field: str, value: str) -> UUID:
    try:
        return UUID(value)
    except ValueError:
        raise Unprocessable(f"{field} is not an id.", field=field) from None


class Lines:
    def __init__(self, audit: AuditLog, settings: Settings) -> None:
        self.audit = audit
        self.settings = settings

    async def _rows(self, where: str = "", *args: Any) -> list[dict[str, Any]]:
        async with db.connection() as connection:
            rows = await connection.fetch(f"{_SELECT} {where} ORDER BY l.e164", *args)
        return [dict(row) for row in rows]

    async def list(self) -> list[dict[str, Any]]:
        return [line_view(row) for row in await self._rows()]

    async def row(self, line_id: str | UUID) -> dict[str, Any]:
        rows = await self._rows("WHERE l.id = $1", parse_id(line_id, "line"))
        if not rows:
            raise NotFound("No such line.")
        return rows[0]

    async def get(self, line_id: str | UUID) -> dict[str, Any]:
        return line_view(await self.row(line_id))

    # -- checks on the line as it would be after the change

    async def _check_agent(self, agent_id: UUID, binder: Identity | None = None) -> None:
        """The agent can be called; with ``binder``, it is also theirs to bind: a line
        puts an agent before every caller, so only its owner or an administrator may
        (another's agent answers exactly like one that does not exist)."""
        row = await Agent.select(Agent.archived_at, Agent.owner_id).where(
            Agent.id == agent_id).first()
        if row is None or (binder is not None and not binder.is_admin
                           and row["owner_id"] != binder.account_id):
            raise Unprocessable("No such agent.", code="agent_unavailable", field="agent_id")
        if row["archived_at"] is not None:
            raise Unprocessable("That agent is archived; a line needs an agent that can be "
                                "called.", code="agent_unavailable", field="agent_id")

    async def _check_owner(self, owner_id: UUID) -> None:
        row = await Account.select(Account.deactivated_at).where(Account.id == owner_id).first()
        if row is None or row["deactivated_at"] is not None:
            raise Unprocessable("No such active account.", code="owner_unavailable",
                                field="owner_user_id")

    async def _check_chat(self, chat_id: UUID, owner_id: UUID | None) -> None:
        row = await Chat.select(Chat.owner_id).where(Chat.id == chat_id).first()
        if row is None or owner_id is None or row["owner_id"] != owner_id:
            raise Unprocessable("deliver_group_chat_id must be a chat of the line's own "
                                "account.", field="deliver_group_chat_id")

    def _check_plain(self, line: dict[str, Any]) -> None:
        if line["provider"] not in ("carrier", "pbx"):
            raise Unprocessable("provider must be carrier or pbx.", field="provider")
        for field, limit in (("label", MAX_LABEL), ("greeting", MAX_GREETING),
                             ("notice", MAX_NOTICE)):
            if line[field] is not None and len(line[field]) > limit:
                raise Unprocessable(f"{field} has at most {limit} characters.", field=field)
        for field in PERIODS:
            if not 0 <= line[field] <= MAX_DAYS:
                raise Unprocessable(f"{field} must be 0 to {MAX_DAYS} days.",
                                    code="out_of_range", field=field)
        if line["record_calls"] and line["recording_days"] <= 0:
            raise Unprocessable("A line that records calls needs recording_days above 0.",
                                field="recording_days")

    async def _checked(self, line: dict[str, Any], given: set[str],
                       binder: Identity) -> dict[str, Any]:
        """Normalise given fields and check the whole line; returns column values."""
        for field in set(given) - set(CLEARABLE):
            if line[field] is None:
                raise Unprocessable(f"{field} cannot be null.", field=field)
        region = await self.settings.get("telephony.default_region")
        for field in ("e164", "transfer_e164"):
            if field in given and line[field] is not None:
                line[field] = _number(field, line[field], region)
        for field in ("agent_id", "owner_user_id", "deliver_group_chat_id"):
            if field in given and isinstance(line[field], str):
                line[field] = _uuid(field, line[field])
        self._check_plain(line)
        # spec: "disabled -> enabled: valid binding" — checked again when enabling.
        enabling = "enabled" in given and line["enabled"]
        if "agent_id" in given or enabling:
            await self._check_agent(line["agent_id"], binder if "agent_id" in given else None)
        if "owner_user_id" in given or enabling:
            await self._check_owner(line["owner_user_id"])
        if line["deliver_group_chat_id"] is not None and (
                "deliver_group_chat_id" in given or "owner_user_id" in given):
            await self._check_chat(line["deliver_group_chat_id"], line["owner_user_id"])
        return line

    async def _refuse_taken(self, e164: str, line_id: UUID | None) -> None:
        row = await TelephonyLine.select(TelephonyLine.id).where(
            TelephonyLine.e164 == e164).first()
        if row is not None and row["id"] != line_id:
            raise Conflict(f"{e164} is already registered.", code="number_taken", field="e164")

    # -- use cases

    async def create(self, identity: Identity, fields: dict[str, Any]) -> dict[str, Any]:
        if fields.get("enabled"):
            raise Unprocessable("A new line starts switched off; enable it once registered.",
                                code="new_line_enabled", field="enabled")
        defaults = {"provider": "carrier", "transcript_days": 0, "log_days": 0,
                    "record_calls": False, "recording_days": 0, "enabled": False,
                    **{field: None for field in CLEARABLE}}
        line = await self._checked({**defaults, **fields},
                                   set(fields) | {"e164", "agent_id", "owner_user_id"},
                                   identity)
        await self._refuse_taken(line["e164"], None)
        row = TelephonyLine(**line)
        try:
            await row.save()
        except asyncpg.UniqueViolationError:
            raise Conflict(f"{line['e164']} is already registered.", code="number_taken",
                           field="e164") from None
        await self.audit.record("telephony.line.created", actor=identity.account_id,
                                subject=str(row.id), data={"e164": line["e164"]})
        return await self.get(row.id)

    async def update(self, identity: Identity, line_id: str,
                     fields: dict[str, Any]) -> dict[str, Any]:
        current = await self.row(line_id)
        line = {column: current[column] for column in (
            "e164", "agent_id", "owner_user_id", "provider", *CLEARABLE, *PERIODS,
            "record_calls", "enabled")}
        line = await self._checked({**line, **fields}, set(fields), identity)
        if "e164" in fields:
            await self._refuse_taken(line["e164"], current["id"])
        values = {getattr(TelephonyLine, field): line[field] for field in fields}
        values[TelephonyLine.updated_at] = dt.datetime.now(dt.UTC)
        try:
            await TelephonyLine.update(values).where(TelephonyLine.id == current["id"])
        except asyncpg.UniqueViolationError:
            raise Conflict(f"{line['e164']} is already registered.", code="number_taken",
                           field="e164") from None
        await self.audit.record("telephony.line.changed", actor=identity.account_id,
                                subject=str(current["id"]), data={"fields": sorted(fields)})
        return await self.get(current["id"])

    async def delete(self, identity: Identity, line_id: str) -> None:
        """Release the line for good; its calls stay in the log under their copies."""
        current = await self.row(line_id)
        async with db.connection() as connection, connection.transaction():
            # Its calls keep the periods it had last, and are swept by them.
            await connection.execute(_KEEP_PERIODS, current["id"])
            await connection.execute("DELETE FROM telephony_line WHERE id = $1", current["id"])
        await self.audit.record("telephony.line.released", actor=identity.account_id,
                                subject=str(current["id"]), data={"e164": current["e164"]})
