"""Telephone lines, the call log, tickets and call counters; per-account feature flags.

The SQL in ``app/piccolo_migrations/svc_2026_11_22t08_00_00_000000.py`` is the source
of truth for constraints (CHECKs on every spec limit, the outcome values); these
classes mirror its columns for queries.
"""

from __future__ import annotations

from piccolo.columns import (UUID, BigSerial, Boolean, ForeignKey, Integer, OnDelete, Text,
                             Timestamptz)
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table

from app.tables.accounts import Account, AccountOwned
from app.tables.mixins import Stamped
from app.tables.platform import Agent, Chat


class FeatureOverride(AccountOwned, Table, tablename="feature_override"):
    """A ``features.*`` flag switched on or off for one account; wins over the global
    value for that account (``app.telephony.features``)."""

    key = Text()
    value = Boolean()
    updated_at = Timestamptz(default=TimestamptzNow())
    updated_by = UUID(null=True, default=None)


class TelephonyLine(Stamped, Table, tablename="telephony_line"):
    """A registered number answered by an agent on behalf of an account."""

    id = UUID(primary_key=True)
    e164 = Text(unique=True)
    agent_id = ForeignKey(references=Agent, null=True, on_delete=OnDelete.set_null)
    owner_user_id = ForeignKey(references=Account, null=True, on_delete=OnDelete.set_null)
    provider = Text(default="carrier")
    label = Text(null=True, default=None)
    greeting = Text(null=True, default=None)
    notice = Text(null=True, default=None)
    transcript_days = Integer(default=0)
    log_days = Integer(default=0)
    record_calls = Boolean(default=False)
    recording_days = Integer(default=0)
    enabled = Boolean(default=False)
    deliver_group_chat_id = ForeignKey(references=Chat, null=True, on_delete=OnDelete.set_null)
    transfer_e164 = Text(null=True, default=None)


class TelephonyCall(Table, tablename="telephony_call"):
    """One call in the log. ``number_id`` and ``e164`` are copies that outlive the line."""

    id = UUID(primary_key=True)
    number_id = UUID(null=True, default=None)
    e164 = Text()
    from_number = Text()
    provider = Text()
    carrier_call_sid = Text(null=True, default=None, unique=True)
    carrier_status = Text(null=True, default=None)
    owner_id = ForeignKey(references=Account, null=True, on_delete=OnDelete.set_null)
    agent_id = ForeignKey(references=Agent, null=True, on_delete=OnDelete.set_null)
    chat_id = ForeignKey(references=Chat, null=True, on_delete=OnDelete.set_null)
    outcome = Text(default="in_progress")
    transfer_approved = Boolean(default=False)
    recording_failed = Boolean(default=False)
    tidied_at = Timestamptz(null=True, default=None)
    started_at = Timestamptz(default=TimestamptzNow())
    media_started_at = Timestamptz(null=True, default=None)
    ended_at = Timestamptz(null=True, default=None)
    #: The process running the call's audio (``telephony_lease.instance_id``).
    owner_instance = UUID(null=True, default=None)
    #: The line's retention periods when the call started (they outlive the line).
    transcript_days = Integer(default=0)
    log_days = Integer(default=0)
    recording_days = Integer(default=0)


class TelephonyLease(Table, tablename="telephony_lease"):
    """A server process's lease on the calls it runs (``app.telephony.leases``)."""

    instance_id = UUID(primary_key=True)
    process_id = Integer()
    host = Text()
    started_at = Timestamptz(default=TimestamptzNow())
    expires_at = Timestamptz()
    #: The address its AudioSocket listener bound, or null (the readiness check).
    pbx_listen = Text(null=True, default=None)


class TelephonyTicket(Table, tablename="telephony_ticket"):
    """A single-use ticket admitting one audio connection to a call (30 s, once)."""

    token = Text(primary_key=True)
    call_id = ForeignKey(references=TelephonyCall, on_delete=OnDelete.cascade)
    issued_at = Timestamptz(default=TimestamptzNow())
    redeemed_at = Timestamptz(null=True, default=None)


class TelephonyTurn(Table, tablename="telephony_turn"):
    """One answered turn of a call: milliseconds from the end of the caller's speech to
    the agent being asked, its first words, its first audio and the end of its answer."""

    id = BigSerial(primary_key=True)
    call_id = ForeignKey(references=TelephonyCall, on_delete=OnDelete.cascade)
    at = Timestamptz(default=TimestamptzNow())
    asked_ms = Integer()
    first_text_ms = Integer(null=True, default=None)
    first_audio_ms = Integer(null=True, default=None)
    finished_ms = Integer()


class TelephonyRing(Table, tablename="telephony_ring"):
    """One ring from a caller's number, kept a few minutes for the per-caller limit."""

    id = BigSerial(primary_key=True)
    from_number = Text()
    at = Timestamptz(default=TimestamptzNow())


class TelephonySignatureFailure(Table, tablename="telephony_signature_failure"):
    """One carrier request whose signature failed, kept a minute per source address."""

    id = BigSerial(primary_key=True)
    address = Text()
    at = Timestamptz(default=TimestamptzNow())
