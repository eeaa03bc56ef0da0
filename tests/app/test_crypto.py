"""Credentials at rest: AES-256-GCM sealing, and unreadable values treated as absent."""

import secrets

import pytest

from app.crypto import EncryptionKeyMissing, InvalidEncryptionKey, SecretBox, parse_key


def test_sealed_value_opens_with_the_same_key_and_purpose():
    box = SecretBox(secrets.token_hex(32))
    sealed = box.seal("s3cret", "telephony.auth_token_enc")
    assert "s3cret" not in sealed
    assert box.open(sealed, "telephony.auth_token_enc") == "s3cret"


def test_changed_key_tampering_or_other_purpose_reads_as_absent():
    box = SecretBox(secrets.token_hex(32))
    sealed = box.seal("s3cret", "a")
    assert SecretBox(secrets.token_hex(32)).open(sealed, "a") is None
    assert box.open(sealed, "b") is None
    tampered = sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1]
    assert box.open(tampered, "a") is None
    assert box.open("garbage", "a") is None
    assert SecretBox(None).open(sealed, "a") is None


def test_sealing_without_a_key_is_refused():
    with pytest.raises(EncryptionKeyMissing):
        SecretBox(None).seal("x", "a")


def test_keys_in_hex_and_base64_are_accepted_and_short_ones_refused():
    raw = secrets.token_bytes(32)
    import base64
    assert parse_key(raw.hex()) == raw
    assert parse_key(base64.b64encode(raw).decode()) == raw
    assert parse_key(base64.urlsafe_b64encode(raw).decode().rstrip("=")) == raw
    with pytest.raises(InvalidEncryptionKey):
        parse_key("too short")
