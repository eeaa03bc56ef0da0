"""The telephone system's two HTTP questions: answer and continue.

spec: telephony.md "Setup: own-telephone-system transport" — the dialplan asks
``GET /api/telephony/pbx/answer?from=…&to=…`` and gets a one-off identifier as plain
text (empty: hang up); it opens the audio connection presenting the identifier; when
that ends it asks ``GET /api/telephony/pbx/continue?call=…`` and gets the number to
transfer to (empty: hang up).

Both questions need the shared secret in ``x-service-telephony-key`` (compared in
constant time) and a private source address; both are required. A public source is
refused with reason ``public_source`` and audited. Every refusal answers with an
empty body, so a dialplan that reads the answer as an identifier hangs up.
"""

from __future__ import annotations

import hmac
import logging

from app.http.errors import Forbidden
from app.services.settings import Settings
from app.telephony.admission import Admissions, caller_text
from app.telephony.calls import CallLog
from app.telephony.tickets import new_pbx_token
from core.phone_numbers import is_private_source
from core.refusals import RefusalReason

log = logging.getLogger("svc.telephony")

KEY_HEADER = b"x-service-telephony-key"
MAX_QUERY_VALUE = 64


class PbxSignalling:
    def __init__(self, settings: Settings, admissions: Admissions, calls: CallLog) -> None:
        self.settings = settings
        self.admissions = admissions
        self.calls = calls

    async def authenticate(self, address: str | None, key: bytes | None, path: str) -> None:
        """Raise :class:`Forbidden` unless the source is private and the secret matches."""
        if not is_private_source(address):
            await self.admissions.refuse(RefusalReason.PUBLIC_SOURCE, address=address,
                                         path=path)
            raise Forbidden("Questions from the telephone system come from its own network.",
                            code="public_source")
        secret = await self.settings.secret("telephony.pbx_key_enc")
        # Both sides are hashed to equal length first, so neither the secret's length
        # nor its content shows in the time the comparison takes.
        if secret is None or key is None or not hmac.compare_digest(
                _digest(secret.encode()), _digest(key)):
            log.warning("pbx question with a wrong or missing key",
                        extra={"address": address, "path": path})
            raise Forbidden("The telephone system's key does not match.", code="bad_key")

    async def answer(self, caller: str | None, dialled: str | None) -> str:
        """The identifier for the audio connection, or "" to hang up."""
        answer = await self.admissions.answer(
            provider="pbx", dialled=(dialled or "")[:MAX_QUERY_VALUE],
            caller=caller_text((caller or "")[:MAX_QUERY_VALUE]), token=new_pbx_token())
        return answer.ticket if answer.taken and answer.ticket else ""

    async def proceed(self, identifier: str | None) -> str:
        """The number to transfer to once the audio connection ended, or ""."""
        if not identifier or len(identifier) > MAX_QUERY_VALUE:
            return ""
        call_id = await self.calls.id_for_ticket(identifier.strip().lower())
        number = await self.calls.transfer_number(call_id) if call_id else None
        return number or ""


def _digest(value: bytes) -> bytes:
    return hmac.new(b"svc.telephony.key", value, "sha256").digest()
