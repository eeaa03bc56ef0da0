"""Signalling of both transports: the carrier's webhooks and the telephone system's
questions, up to the moment audio flows.

**Carrier** (spec: telephony.md "Authentication") — a webhook is verified against the
stored credential before anything is read: one without a signature is refused from
its headers, its body never read; otherwise the body is read only as far as the
signature needs (the form parameters it covers, at most 16 KiB), and nothing else of
it is used until the signature holds. A failure answers 403 and is audited
``telephony.signature.rejected``, counted: one entry per address and window
(``AuditLog.tally``). An address with 30 failures in the last minute is locked out
(429), counted in the database so every process sees it; the lock-out only spares the
work of refusing — an unsigned request is refused from its headers without a write,
a wrongly signed one without recording it — while a request whose signature holds is
always checked and taken, so no one sharing or spoofing the carrier's address can shut
the carrier out.
Then ``voice`` takes or refuses the call (``app.telephony.admission``) and answers
``<Connect><Stream>`` with the call's single-use ticket, or ``<Reject/>``; ``status``
keeps the carrier's call status (a final one before media is ``carrier_ended``);
``continue`` answers ``<Dial>`` with the line's transfer number when a transfer passed
the screening gate, else ``<Hangup/>``.

**Pbx** (spec: telephony.md "Setup: own-telephone-system transport") — the dialplan
asks ``GET /api/telephony/pbx/answer?from=…&to=…`` and gets a one-off identifier as
plain text (empty: hang up); it opens the audio connection presenting the identifier;
when that ends it asks ``GET /api/telephony/pbx/continue?call=…`` and gets the number
to transfer to (empty: hang up). Both questions need the shared secret in
``x-service-telephony-key`` (compared in constant time) and a private source address;
a public source is refused with reason ``public_source`` and audited.
"""

from __future__ import annotations

import hmac
import logging
from dataclasses import dataclass

from app.errors import ApiError, Forbidden, TooManyRequests
from app.services.audit import MANY_SOURCES, AuditLog
from app.services.settings import Settings
from app.telephony import limits
from app.telephony.admission import DATABASE_ERRORS, Admissions, caller_text
from app.telephony.calls import CallLog
from app.telephony.limits import new_carrier_token, new_pbx_token
from app.telephony.settings_resource import media_url, public_url
from core import twiml
from core.phone_numbers import is_private_source
from core.records import frozen
from core.refusals import RefusalReason
from core.twilio_signature import FormError, parse_form, verify

log = logging.getLogger("svc.telephony")

# -- carrier

PREFIX = "/api/telephony/carrier"
VOICE_PATH, STATUS_PATH = f"{PREFIX}/voice", f"{PREFIX}/status"
CONTINUE_PATH, MEDIA_PATH = f"{PREFIX}/continue", f"{PREFIX}/media"
MAX_WEBHOOK_BODY = 16 * 1024  # spec: telephony.md "Limits" — carrier webhook body, 16 KiB
SIGNATURE_HEADERS = (b"x-carrier-signature", b"x-twilio-signature")


@frozen
class CarrierRequest:
    """What the signature covers and who sent it, as the route read it."""

    path: str
    query: str
    body: bytes
    signature: str | None
    address: str


Params = dict[str, str]


@dataclass(eq=False)
class CarrierSignalling:
    settings: Settings
    admissions: Admissions
    calls: CallLog
    audit: AuditLog

    async def _over_failure_limit(self, address: str) -> bool:
        try:
            return await limits.signature_failures(address) >= limits.SIGNATURE_FAILURES_PER_MINUTE
        except DATABASE_ERRORS:
            return False  # the signature check below still holds on its own

    async def _reject_signature(self, path: str, address: str) -> ApiError:
        """The refusal of a failed signature: 429 without a write once the address is
        locked out, else 403, recorded and audited (counted per address and window)."""
        if await self._over_failure_limit(address):
            return TooManyRequests("Too many failed signatures from this address.",
                                   code="too_many_signature_failures",
                                   retry_after=60)
        try:
            await limits.record_signature_failure(address)
            await self.audit.tally("telephony.signature.rejected", address, subject=path,
                                   data={"address": address}, many=MANY_SOURCES)
        except DATABASE_ERRORS:
            log.warning("signature failure could not be recorded")
        return Forbidden("The carrier signature does not match.", code="bad_signature")

    async def before_body(self, path: str, address: str, signature: str | None) -> None:
        """Refuse a request with no signature from its headers alone, before the body is
        read (403, or 429 once the address is locked out). spec: telephony.md
        "Authentication" — "verified ... before anything is read"."""
        if not signature:
            raise await self._reject_signature(path, address)

    async def authenticate(self, request: CarrierRequest) -> Params:
        """The posted parameters of a request whose signature holds; raises otherwise.
        Call ``before_body`` first."""
        snapshot = await self.settings.snapshot()
        url = public_url(snapshot, request.path) + (f"?{request.query}" if request.query else "")
        credential = await self.settings.secret("telephony.auth_token_enc")
        try:
            pairs = parse_form(request.body)
        except FormError:
            raise await self._reject_signature(request.path, request.address) from None
        if not verify(credential, url, pairs, request.signature):
            raise await self._reject_signature(request.path, request.address)
        params: Params = {}
        for name, value in pairs:
            params.setdefault(name, value)
        return params

    async def voice(self, params: Params) -> bytes:
        """Take or refuse an incoming call: ``<Connect><Stream>`` or ``<Reject/>``."""
        answer = await self.admissions.answer(
            provider="carrier", dialled=params.get("To", ""),
            caller=caller_text(params.get("From")), token=new_carrier_token(),
            call_sid=params.get("CallSid") or None)
        if not answer.taken:
            return twiml.reject()
        snapshot = await self.settings.snapshot()
        return twiml.connect_stream(public_url(snapshot, CONTINUE_PATH),
                                    media_url(snapshot, MEDIA_PATH), {"ticket": answer.ticket})

    async def status(self, params: Params) -> bytes:
        """Record the carrier's call status; the carrier reads nothing from the answer."""
        call_sid, status = params.get("CallSid"), params.get("CallStatus")
        if call_sid and status:
            await self.calls.record_carrier_status(call_sid, status)
        return twiml.empty()

    async def proceed(self, params: Params) -> bytes:
        """What the carrier does once the service side finished: dial or hang up."""
        call_id = await self.calls.id_for_carrier_call(params.get("CallSid", ""))
        number = await self.calls.transfer_number(call_id) if call_id else None
        return twiml.dial(number) if number else twiml.hangup()


# -- pbx

KEY_HEADER = b"x-service-telephony-key"
#: The audited reason of a pbx question without the shared secret (not a call refusal).
BAD_KEY = "bad_key"
MAX_QUERY_VALUE = 64


@dataclass(eq=False)
class PbxSignalling:
    settings: Settings
    admissions: Admissions
    calls: CallLog

    async def authenticate(self, address: str | None, key: bytes | None, path: str) -> None:
        """Raise :class:`Forbidden` unless the source is private and the secret matches."""
        if not is_private_source(address):
            await self.admissions.refuse_counted(RefusalReason.PUBLIC_SOURCE.value,
                                                 address or "", address=address, path=path)
            raise Forbidden("Questions from the telephone system come from its own network.",
                            code="public_source")
        secret = await self.settings.secret("telephony.pbx_key_enc")
        # Both sides are hashed to equal length first, so neither the secret's length
        # nor its content shows in the time the comparison takes.
        if secret is None or key is None or not hmac.compare_digest(
                _digest(secret.encode()), _digest(key)):
            log.warning("pbx question with a wrong or missing key",
                        extra={"address": address, "path": path})
            await self.admissions.refuse_counted(BAD_KEY, address or "",
                                                 address=address, path=path)
            raise Forbidden("The telephone system's key does not match.", code="bad_key")

    async def answer(self, caller: str | None, dialled: str | None) -> str:
        """The identifier for the audio connection, or "" to hang up."""
        answer = await self.admissions.answer(
            provider="pbx", dialled=(dialled or "")[:MAX_QUERY_VALUE],
            caller=caller_text((caller or "")[:MAX_QUERY_VALUE]), token=new_pbx_token())
        return answer.ticket if answer.taken and answer.ticket else ""

    async def proceed(self, identifier: str | None) -> str:
        """The number to transfer to once the audio connection ended, or ""."""
        # An identifier is UUID text; anything else (a NUL character, which the
        # database cannot even compare, included) names no call.
        if (not identifier or len(identifier) > MAX_QUERY_VALUE or not identifier.isascii()
                or not identifier.isprintable()):
            return ""
        call_id = await self.calls.id_for_ticket(identifier.strip().lower())
        number = await self.calls.transfer_number(call_id) if call_id else None
        return number or ""


def _digest(value: bytes) -> bytes:
    return hmac.new(b"svc.telephony.key", value, "sha256").digest()
