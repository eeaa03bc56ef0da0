"""Credentials at rest: AES-256-GCM with ``message_encryption_key``.

A sealed value is ``v1.`` + urlsafe base64 of nonce (12 bytes) ‖ ciphertext ‖ tag.
The purpose (a setting key or a column name) is bound in as associated data, so a
value sealed for one place cannot be replayed into another. Opening never raises:
a value that cannot be opened (the key changed, the bytes were altered) is treated as
absent, which fails closed wherever a credential is required.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from app.errors import Conflict

log = logging.getLogger("svc.crypto")

PREFIX = "v1."
NONCE_BYTES = 12


#: What an operator reads when a credential cannot be stored: the variable to set and
#: that the service must be restarted to read it (a boot setting).
KEY_MISSING_MESSAGE = (
    "No message encryption key is set, so no credential can be stored. Set "
    "SVC__MESSAGE_ENCRYPTION_KEY to 32 random bytes as 64 hex digits (python3 -c 'import "
    "secrets; print(secrets.token_hex(32))') in the service's environment and restart svc.")


def key_missing(field: str) -> Conflict:
    """The 409 for a credential that cannot be sealed; ``field`` names what was sent."""
    return Conflict(KEY_MISSING_MESSAGE, code="encryption_key_missing", field=field)


class EncryptionKeyMissing(Exception):
    """A credential was to be stored but ``message_encryption_key`` is not set."""


class InvalidEncryptionKey(ValueError):
    """``message_encryption_key`` is not 32 bytes in base64 or hex."""


def parse_key(text: str) -> bytes:
    """Accept 64 hex digits or base64 (standard or urlsafe) of exactly 32 bytes."""
    text = text.strip()
    candidates = []
    if len(text) == 64:
        try:
            candidates.append(bytes.fromhex(text))
        except ValueError:
            pass
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            candidates.append(decode(text + "=" * (-len(text) % 4)))
        except (binascii.Error, ValueError):
            pass
    for key in candidates:
        if len(key) == 32:
            return key
    raise InvalidEncryptionKey(
        "message_encryption_key must be 32 random bytes, as 64 hex digits or base64 "
        "(make one with: python3 -c 'import secrets; print(secrets.token_hex(32))')"
    )


class SecretBox:
    """Seals and opens credentials; ``SecretBox(None)`` refuses to seal."""

    def __init__(self, key_text: str | None) -> None:
        self._aead = AESGCM(parse_key(key_text)) if key_text else None

    @property
    def can_seal(self) -> bool:
        return self._aead is not None

    def seal(self, plaintext: str, purpose: str) -> str:
        if self._aead is None:
            raise EncryptionKeyMissing(purpose)
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, plaintext.encode(), purpose.encode())
        return PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode()

    def open(self, token: str | None, purpose: str) -> str | None:
        """The plaintext, or None when absent or unreadable (logged, never raised)."""
        if not token:
            return None
        if self._aead is None or not token.startswith(PREFIX):
            log.warning("stored credential cannot be read", extra={"purpose": purpose})
            return None
        try:
            raw = base64.urlsafe_b64decode(token[len(PREFIX):])
            plain = self._aead.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], purpose.encode())
            return plain.decode()
        except (InvalidTag, ValueError, binascii.Error):
            log.warning("stored credential cannot be read", extra={"purpose": purpose})
            return None
