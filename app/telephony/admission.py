"""Taking or refusing an incoming call, for both transports, before any audio flows.

The carrier voice webhook and the pbx answer request both call
:meth:`Admissions.answer`: it looks the line up, asks ``core.refusals`` in the spec's
order, admits the call under the limits (``app.telephony.limits``), and mints the
single-use ticket. A refusal is audited as ``telephony.refused`` with its reason and
the transport answers it the same way for every reason (``<Reject/>``, or an empty
body): a caller cannot tell an unknown number from a disabled line. A refusal a
stranger can repeat at will (a pbx question from the wrong place) is counted per
source instead (``refuse_counted``), so repeating it cannot flood the audit trail.

A carrier call is admitted once: the voice webhook again for the same ``CallSid`` (a
retry, or a replay of a signed request) mints no ticket. It is audited as
``telephony.replayed``, counted per call, and answered with the ticket the call
already has while that one is unspent and in its lifetime — the carrier's own retry
then still connects, and there is still one ticket, so one audio stream — otherwise
refused like any other refusal.

Fail closed: when the database cannot be asked the call is refused ``lookup_failed``;
when the ticket cannot be stored, ``ticket_unavailable`` (the recorded call then ends
as ``no_media`` at the next admission, since no ticket can reach it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import asyncpg

from app import db
from app.services.audit import MANY_SOURCES, AuditLog
from app.services.settings import Settings, Snapshot
from app.telephony import limits
from app.telephony.features import FeatureFlags
from app.telephony.limits import TicketStore
from core.phone_numbers import InvalidPhoneNumber, normalise_e164
from core.records import frozen
from core.refusals import (
    LineFacts,
    Limits,
    RefusalReason,
    decide,
    streaming_synthesiser_configured,
)

log = logging.getLogger("svc.telephony")

#: What "the database cannot be asked" looks like from here.
DATABASE_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError)
VOICE_FLAGS = ("features.voice", "features.voice_live")
MAX_CALLER_TEXT = 64

#: A line with what its binding needs to be callable (``core.refusals.binding_refusal``);
#: the caller adds its ``WHERE``.
LINE_FACTS = """
SELECT l.id, l.e164, l.provider, l.enabled, l.agent_id, l.owner_user_id, l.transfer_e164,
       a.id IS NOT NULL AND a.archived_at IS NULL AS agent_callable,
       o.id IS NOT NULL AND o.deactivated_at IS NULL AS owner_active,
       o.role AS owner_role
FROM telephony_line l
LEFT JOIN agent a ON a.id = l.agent_id
LEFT JOIN account o ON o.id = l.owner_user_id
"""
_LINE = LINE_FACTS + "WHERE l.e164 = $1"


@frozen
class Answer:
    """An admitted call with its ticket, or the reason it was refused."""

    call_id: UUID | None = None
    ticket: str | None = None
    refusal: RefusalReason | None = None

    @property
    def taken(self) -> bool:
        return self.refusal is None and self.ticket is not None


def caller_text(given: str | None, region: str | None = None) -> str:
    """The caller's number as E.164 when it is one (read in ``region`` when national);
    otherwise the carrier's text (``anonymous``, a SIP name), bounded. A withheld one
    is counted by no per-number limit (``core.withheld_numbers``)."""
    text = (given or "").strip()
    try:
        return normalise_e164(text, region)
    except InvalidPhoneNumber:
        return text[:MAX_CALLER_TEXT] or "unknown"


@dataclass(eq=False)
class Admissions:
    settings: Settings
    features: FeatureFlags
    tickets: TicketStore
    audit: AuditLog

    async def _line(self, dialled: str, provider: str,
                    region: str | None) -> dict[str, Any] | None:
        try:
            number = normalise_e164(dialled, region)
        except InvalidPhoneNumber:
            return None
        async with db.connection() as connection:
            row = await connection.fetchrow(_LINE, number)
        # A line answers on its own transport only; elsewhere it is not there.
        return dict(row) if row is not None and row["provider"] == provider else None

    async def _facts(self, line: dict[str, Any] | None, snapshot: Snapshot) -> LineFacts:
        owner = line["owner_user_id"] if line else None
        voice = line is not None and await self.features.all_on(VOICE_FLAGS, owner, snapshot)
        return LineFacts(
            line_found=line is not None,
            line_enabled=bool(line and line["enabled"]),
            agent_callable=bool(line and line["agent_callable"]),
            owner_active=bool(line and line["owner_active"]),
            voice_enabled=voice,
            streaming_synthesiser=streaming_synthesiser_configured(
                snapshot["voice_live.tts_stream"], snapshot["voice_live.tts_stream_url"]),
            sample_rate=snapshot["voice_live.stt_sample_rate"],
        )

    async def refuse(self, reason: RefusalReason, **detail: Any) -> Answer:
        """Audit the refusal (best effort: the database may be what failed)."""
        try:
            await self.audit.record("telephony.refused", subject=detail.get("to"),
                                    data={"reason": reason.value, **detail})
        except DATABASE_ERRORS:
            log.warning("refusal could not be audited", extra={"reason": reason.value})
        return Answer(refusal=reason)

    async def refuse_counted(self, reason: str, source: str, **detail: Any) -> None:
        """Audit a refusal anyone can provoke: one counted entry per source, reason and
        window (best effort, like :meth:`refuse`)."""
        try:
            await self.audit.tally("telephony.refused", f"{reason} {source}",
                                   data={"reason": reason, **detail},
                                   many={"reason": reason, **MANY_SOURCES})
        except DATABASE_ERRORS:
            log.warning("refusal could not be audited", extra={"reason": reason})

    async def _repeated(self, call_id: UUID, detail: dict[str, Any]) -> Answer:
        """The voice webhook again for a call already admitted: no new ticket."""
        ticket = await self.tickets.live(call_id)
        answered = ticket is not None  # a retry while the ticket waits, or refused
        await self.audit.tally("telephony.replayed", f"{call_id} {answered}",
                               subject=str(call_id),
                               data={**detail, "call_id": str(call_id), "answered": answered})
        return Answer(call_id=call_id, ticket=ticket)

    async def answer(self, *, provider: str, dialled: str, caller: str, token: str,
                     call_sid: str | None = None) -> Answer:
        """Decide the call; when taken, it is recorded in progress with its ticket."""
        detail = {"provider": provider, "to": dialled[:MAX_CALLER_TEXT], "from": caller}
        try:
            snapshot = await self.settings.snapshot()
            region = snapshot["telephony.default_region"]
            caller = caller_text(caller, region)  # a national number, once the region is known
            line = await self._line(dialled, provider, region)
            reason = decide(await self._facts(line, snapshot))
            if reason is not None:
                return await self.refuse(reason, **detail)
            assert line is not None  # decide() refuses a call without a line
            admission = await limits.admit(limits.NewCall(
                number_id=line["id"], e164=line["e164"], from_number=caller,
                provider=provider, owner_id=line["owner_user_id"], agent_id=line["agent_id"],
                carrier_call_sid=call_sid,
            ), Limits(max_concurrent_calls=snapshot["telephony.max_concurrent_calls"]))
        except DATABASE_ERRORS:
            log.exception("call lookup failed")
            return await self.refuse(RefusalReason.LOOKUP_FAILED, **detail)
        if admission.refusal is not None:
            if admission.call_id is not None:  # logged as line_full
                detail["call_id"] = str(admission.call_id)
            return await self.refuse(admission.refusal, **detail)
        if admission.repeated:
            try:
                return await self._repeated(admission.call_id, detail)
            except DATABASE_ERRORS:
                log.exception("repeated call could not be looked up")
                return await self.refuse(RefusalReason.LOOKUP_FAILED, **detail)
        try:
            ticket = await self.tickets.issue(admission.call_id, token)
        except DATABASE_ERRORS:
            log.exception("ticket could not be stored")
            return await self.refuse(RefusalReason.TICKET_UNAVAILABLE, **detail)
        return Answer(call_id=admission.call_id, ticket=ticket)
