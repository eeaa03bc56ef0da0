"""The diary, closures, appointments, the screening list and enquiries.

The SQL in ``app/piccolo_migrations/svc_2026_11_23t02_00_00_000000.py`` is the source
of truth for constraints (the exclusion constraint that keeps two appointments out of
one slot, the CHECKs on every limit); these classes mirror its columns for queries.
"""

from __future__ import annotations

from piccolo.columns import (JSONB, UUID, Boolean, Date, ForeignKey, Integer, OnDelete, Text,
                             Timestamptz)
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table

from app.tables.accounts import Account, AccountOwned
from app.tables.mixins import Created, Stamped
from app.tables.telephony import TelephonyCall


class Diary(Table, tablename="diary"):
    """An account's diary settings and opening hours (a JSON list of periods)."""

    id = UUID(primary_key=True)
    account_id = ForeignKey(references=Account, unique=True, on_delete=OnDelete.cascade)
    timezone = Text()
    slot_minutes = Integer()
    lead_minutes = Integer()
    horizon_days = Integer()
    enabled = Boolean(default=False)
    hours = JSONB(default="[]")
    updated_at = Timestamptz(default=TimestamptzNow())


class DiaryClosure(AccountOwned, Created, Table, tablename="diary_closure"):
    """A local date on which the diary is closed."""

    closed_on = Date()
    note = Text(null=True, default=None)


class Appointment(AccountOwned, Stamped, Table, tablename="appointment"):
    """A booking in an account's diary."""

    reference = Text()
    starts_at = Timestamptz()
    ends_at = Timestamptz()
    caller_name = Text()
    subject = Text()
    contact = Text(null=True, default=None)
    caller_number = Text(null=True, default=None)
    state = Text(default="booked")
    call_id = ForeignKey(references=TelephonyCall, null=True, on_delete=OnDelete.set_null)
    cancelled_at = Timestamptz(null=True, default=None)


class ScreeningName(AccountOwned, Created, Table, tablename="screening_name"):
    """One name of an account's screening list, with its normal form."""

    name = Text()
    normal_form = Text()
    note = Text(null=True, default=None)


class Enquiry(AccountOwned, Stamped, Table, tablename="enquiry"):
    """A message taken on a call."""

    call_id = ForeignKey(references=TelephonyCall, null=True, on_delete=OnDelete.set_null)
    caller_number = Text(default="")
    caller_name = Text(null=True, default=None)
    subject = Text()
    message = Text()
    status = Text(default="new")
    note = Text(null=True, default=None)
