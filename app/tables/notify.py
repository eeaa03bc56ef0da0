"""Outward notifications: targets, the outbox and the attempts.

The SQL in ``app/piccolo_migrations/svc_2026_11_23t03_00_00_000000.py`` is the source
of truth for constraints; these classes mirror its columns for queries.
"""

from __future__ import annotations

from piccolo.columns import (UUID, Array, BigSerial, Boolean, ForeignKey, Integer, OnDelete,
                             Text, Timestamptz)
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table

from app.tables.accounts import AccountOwned
from app.tables.mixins import Created, Stamped
from core.notifications import TARGET_EVENT_NAMES


class NotifyTarget(AccountOwned, Stamped, Table, tablename="notify_target"):
    """Where an account's notifications go; the url is sealed, ``host`` is shown."""

    kind = Text()
    label = Text(null=True, default=None)
    url_enc = Text()
    host = Text()
    secret_enc = Text(null=True, default=None)
    # Every event unless chosen, as the column's default in SQL.
    events = Array(base_column=Text(), default=lambda: list(TARGET_EVENT_NAMES))
    enabled = Boolean(default=True)


class NotifyOutbox(AccountOwned, Created, Table, tablename="notify_outbox"):
    """One notification to post to one target, written with the event it tells of."""

    target_id = ForeignKey(references=NotifyTarget, on_delete=OnDelete.cascade)
    event = Text()
    text = Text()
    subject_id = UUID(null=True, default=None)
    idempotency_key = Text(unique=True)
    status = Text(default="pending")
    attempts = Integer(default=0)
    next_attempt_at = Timestamptz(default=TimestamptzNow())
    claimed_until = Timestamptz(null=True, default=None)
    last_error = Text(null=True, default=None)
    finished_at = Timestamptz(null=True, default=None)


class NotifyAttempt(Table, tablename="notify_attempt"):
    """One attempt to post (an outbox row's, or a target's live test)."""

    id = BigSerial(primary_key=True)
    target_id = ForeignKey(references=NotifyTarget, on_delete=OnDelete.cascade)
    outbox_id = ForeignKey(references=NotifyOutbox, null=True, on_delete=OnDelete.cascade)
    number = Integer()
    result = Text(default="in_flight")
    status_code = Integer(null=True, default=None)
    detail = Text(null=True, default=None)
    started_at = Timestamptz(default=TimestamptzNow())
    finished_at = Timestamptz(null=True, default=None)
