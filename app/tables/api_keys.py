"""API keys for ``/v1``. Only the SHA-256 fingerprint of a key's value is stored, with a
short display prefix; ``rate_tat`` is the per-minute limit's state, the key's
theoretical arrival time in microseconds since the epoch (``core.ratelimit``)."""

from __future__ import annotations

from piccolo.columns import BigInt, Text, Timestamptz
from piccolo.table import Table

from app.tables.accounts import AccountOwned
from app.tables.mixins import Created


class ApiKey(AccountOwned, Created, Table, tablename="api_key"):
    name = Text()
    prefix = Text()
    fingerprint = Text(unique=True)
    expires_at = Timestamptz(null=True, default=None)
    last_used_at = Timestamptz(null=True, default=None)
    revoked_at = Timestamptz(null=True, default=None)
    rate_tat = BigInt(null=True, default=None)
