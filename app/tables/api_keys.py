"""API keys for ``/v1``. Only the SHA-256 fingerprint of a key's value is stored, with a
short display prefix; ``rate_tat`` is the per-minute limit's state, the key's
theoretical arrival time in microseconds since the epoch (``core.ratelimit``)."""

from __future__ import annotations

from piccolo.columns import UUID, BigInt, ForeignKey, OnDelete, Text, Timestamptz
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table

from app.tables.accounts import Account


class ApiKey(Table, tablename="api_key"):
    id = UUID(primary_key=True)
    account_id = ForeignKey(references=Account, on_delete=OnDelete.cascade)
    name = Text()
    prefix = Text()
    fingerprint = Text(unique=True)
    created_at = Timestamptz(default=TimestamptzNow())
    expires_at = Timestamptz(null=True, default=None)
    last_used_at = Timestamptz(null=True, default=None)
    revoked_at = Timestamptz(null=True, default=None)
    rate_tat = BigInt(null=True, default=None)
