"""Notification targets: where an account's notifications go (``/api/notify-targets``).

spec: telephony.md "Notification target" — kind ``chat_a``, ``chat_b`` or ``webhook``;
an events filter; the url "stored encrypted, never returned; a saved target shows
only its host"; enabled by default. Owner or administrator; anyone else gets 404.

A webhook target gets a signing secret made here and shown once, in the answer that
made it (or rotated it): the receiver checks ``X-Svc-Signature`` with it. Chat
services sign nothing, so their targets have none.

The live test (``test``) posts a fixed line through the same sender and gate as the
worker and records the attempt; like every other post it waits for an administrator
to switch outward notifications on. A person presses it a few times in a row at most,
so each caller gets a small burst, then one test every ``TEST_PACE.refill_seconds``
(429 with ``Retry-After``): the button is no tool for sending requests in bulk.
"""

from __future__ import annotations

__all__ = ["NotifyTargets", "URL_PURPOSE", "SECRET_PURPOSE", "open_target", "public_view"]

import datetime as dt
import secrets
import time
from typing import Any
from uuid import UUID

from adapters.egress_http import EgressRefused, precheck
from adapters.notify_sender import NotificationSender
from app import db
from app.crypto import EncryptionKeyMissing, SecretBox, key_missing
from app.errors import Conflict, NotFound, TooManyRequests, Unprocessable
from app.notify.attempts import UNREADABLE, finish_attempt, start_attempt
from app.services.access import owned_row, owner_or_admin, parse_id
from app.services.accounts import Identity
from app.services.audit import AuditLog
from app.services.settings import Settings
from app.tables import Account, NotifyTarget
from core.bursts import BurstPolicy, Bursts
from core.egress import display_host
from core.notifications import (
    TARGET_EVENT_NAMES,
    EventKind,
    OutgoingRequest,
    TargetKind,
    build_request,
)

URL_PURPOSE = "notify_target.url"
SECRET_PURPOSE = "notify_target.secret"
_MAX_URL = 2000
_MAX_LABEL = 200
TEST_TEXT = "Test notification from svc: this target receives notifications."
#: Live tests per caller: five at once, then one every twelve seconds (five a minute).
TEST_PACE = BurstPolicy(burst=5, refill_seconds=12.0)


def public_view(row: dict[str, Any], last_attempt: dict[str, Any] | None = None) -> dict[str, Any]:
    """A target as the API shows it: the host of its url, never the url or the secret."""
    return {
        "id": str(row["id"]), "account_id": str(row["account_id"]), "kind": row["kind"],
        "label": row["label"], "host": row["host"], "events": list(row["events"]),
        "enabled": row["enabled"], "signed": row["secret_enc"] is not None,
        "last_attempt": last_attempt,
        "created_at": row["created_at"].isoformat(), "updated_at": row["updated_at"].isoformat(),
    }


def _attempt_view(row: dict[str, Any]) -> dict[str, Any]:
    return {"result": row["result"], "status_code": row["status_code"], "detail": row["detail"],
            "at": row["started_at"].isoformat()}


def open_target(box: SecretBox, row: dict[str, Any]) -> tuple[str | None, bytes | None]:
    """The url and signing secret in clear. The url is None when the url or a stored
    secret cannot be opened (the key changed): the post then fails closed rather than
    going out unsigned."""
    secret = box.open(row["secret_enc"], SECRET_PURPOSE)
    if row["secret_enc"] is not None and secret is None:
        return None, None
    return box.open(row["url_enc"], URL_PURPOSE), secret.encode() if secret else None


def _check_url(url: str, allow_hosts: tuple[str, ...]) -> str:
    """The host to show, or 422: an https address whose name or literal address the
    egress gate does not refuse already (names are judged again at every post). Plain
    http is only for a host the administrator named in ``egress.allow_hosts`` (a
    receiver on the local network, often without a certificate): anywhere else the
    news of a caller would cross the internet in clear."""
    host = display_host(url) if isinstance(url, str) else None
    if not host or len(url) > _MAX_URL or not url.lower().startswith(("http://", "https://")):
        raise Unprocessable("url must be an https:// address with a host.", field="url")
    try:
        precheck(url, allow_hosts)
    except EgressRefused as refused:
        raise Unprocessable(f"url is not allowed: {refused.decision.detail}.",
                            code="egress_refused", field="url") from None
    if url.lower().startswith("http://") and host not in allow_hosts:
        raise Unprocessable("url must be an https:// address; plain http is only for a host "
                            "named in egress.allow_hosts.", code="https_required", field="url")
    return host


def _check_events(events: list[str]) -> list[str]:
    unknown = [event for event in events if event not in TARGET_EVENT_NAMES]
    if unknown or not events:
        raise Unprocessable(f"events must be a non-empty list of {', '.join(TARGET_EVENT_NAMES)}.",
                            field="events")
    return list(dict.fromkeys(events))


def _check_label(label: str | None) -> str | None:
    if label is not None and len(label) > _MAX_LABEL:
        raise Unprocessable(f"label is at most {_MAX_LABEL} characters.", field="label")
    return label or None


class NotifyTargets:
    def __init__(self, settings: Settings, box: SecretBox, audit: AuditLog,
                 sender: NotificationSender) -> None:
        self.settings = settings
        self.box = box
        self.audit = audit
        self.sender = sender
        #: per caller, in this process (``time.monotonic`` seconds)
        self._test_pace = Bursts(TEST_PACE)

    def _seal(self, value: str, purpose: str, field: str) -> str:
        try:
            return self.box.seal(value, purpose)
        except EncryptionKeyMissing:
            raise key_missing(field) from None

    async def _row(self, identity: Identity, target_id: str | UUID) -> dict[str, Any]:
        return await owned_row(identity, NotifyTarget, target_id, "notification target",
                               "account_id")

    async def _last_attempts(self, target_ids: list[UUID]) -> dict[UUID, dict[str, Any]]:
        if not target_ids:
            return {}
        async with db.connection() as connection:
            rows = await connection.fetch(
                "SELECT DISTINCT ON (target_id) target_id, result, status_code, detail, "
                "started_at FROM notify_attempt WHERE target_id = ANY($1::uuid[]) "
                "ORDER BY target_id, started_at DESC, id DESC", target_ids)
        return {row["target_id"]: _attempt_view(row) for row in rows}

    async def _view(self, row: dict[str, Any]) -> dict[str, Any]:
        return public_view(row, (await self._last_attempts([row["id"]])).get(row["id"]))

    async def _account_for(self, identity: Identity, account_id: str | None) -> UUID:
        """Whose targets: the caller's own, or the named account's for an administrator."""
        if account_id is None or str(account_id) == str(identity.account_id):
            return identity.account_id
        owner_or_admin(identity, account_id, "No such account.")
        found = parse_id(account_id, "account")
        if not await Account.exists().where(Account.id == found):
            raise NotFound("No such account.")
        return found

    async def list(self, identity: Identity, account_id: str | None = None) -> list[dict[str, Any]]:
        owner = await self._account_for(identity, account_id)
        rows = await NotifyTarget.select().where(NotifyTarget.account_id == owner).order_by(
            NotifyTarget.created_at)
        last = await self._last_attempts([row["id"] for row in rows])
        return [public_view(row, last.get(row["id"])) for row in rows]

    async def get(self, identity: Identity, target_id: str) -> dict[str, Any]:
        return await self._view(await self._row(identity, target_id))

    async def create(self, identity: Identity, *, kind: str, url: str,
                     events: list[str] | None = None, label: str | None = None,
                     enabled: bool = True, account_id: str | None = None
                     ) -> tuple[dict[str, Any], str | None]:
        """The new target and, for a webhook, its signing secret (shown this once)."""
        owner = await self._account_for(identity, account_id)
        if kind not in {member.value for member in TargetKind}:
            raise Unprocessable("kind must be chat_a, chat_b or webhook.", field="kind")
        host = _check_url(url, await self.settings.egress_allow_hosts())
        values = {"events": _check_events(list(TARGET_EVENT_NAMES) if events is None else events),
                  "label": _check_label(label)}
        signing = secrets.token_hex(32) if kind == TargetKind.WEBHOOK.value else None
        row = NotifyTarget(
            account_id=owner, kind=kind, host=host, enabled=enabled, **values,
            url_enc=self._seal(url, URL_PURPOSE, "url"),
            secret_enc=self._seal(signing, SECRET_PURPOSE, "url") if signing else None)
        await row.save()
        await self.audit.record("notify.target.created", actor=identity.account_id,
                                subject=str(row.id), data={"kind": kind, "host": host})
        return await self.get(identity, row.id), signing

    async def update(self, identity: Identity, target_id: str, changes: dict[str, Any]
                     ) -> tuple[dict[str, Any], str | None]:
        """Change the given fields; ``rotate_secret`` makes a new signing secret, which
        is returned this once."""
        row = await self._row(identity, target_id)
        values: dict[Any, Any] = {NotifyTarget.updated_at: dt.datetime.now(dt.UTC)}
        if "url" in changes:
            url = changes["url"]
            values[NotifyTarget.host] = _check_url(url, await self.settings.egress_allow_hosts())
            values[NotifyTarget.url_enc] = self._seal(url, URL_PURPOSE, "url")
        if "events" in changes:
            values[NotifyTarget.events] = _check_events(changes["events"])
        if "label" in changes:
            values[NotifyTarget.label] = _check_label(changes["label"])
        if "enabled" in changes:
            values[NotifyTarget.enabled] = changes["enabled"]
        signing = None
        if changes.get("rotate_secret"):
            if row["kind"] != TargetKind.WEBHOOK.value:
                raise Unprocessable("Only a webhook target has a signing secret.",
                                    field="rotate_secret")
            signing = secrets.token_hex(32)
            values[NotifyTarget.secret_enc] = self._seal(signing, SECRET_PURPOSE, "rotate_secret")
        await NotifyTarget.update(values).where(NotifyTarget.id == row["id"])
        await self.audit.record("notify.target.changed", actor=identity.account_id,
                                subject=str(row["id"]), data={"fields": sorted(changes)})
        return await self.get(identity, row["id"]), signing

    async def delete(self, identity: Identity, target_id: str) -> None:
        row = await self._row(identity, target_id)
        await NotifyTarget.delete().where(NotifyTarget.id == row["id"])
        await self.audit.record("notify.target.deleted", actor=identity.account_id,
                                subject=str(row["id"]), data={"host": row["host"]})

    async def attempts(self, identity: Identity, target_id: str,
                       limit: int = 50) -> list[dict[str, Any]]:
        """The latest attempts to post to the target, newest first, with the event each
        was for (``test`` for a live test) — never the text, which names the caller."""
        row = await self._row(identity, target_id)
        async with db.connection() as connection:
            rows = await connection.fetch(
                "SELECT a.number, a.result, a.status_code, a.detail, a.started_at, "
                "coalesce(o.event, 'test') AS event, o.status AS notification_status "
                "FROM notify_attempt a LEFT JOIN notify_outbox o ON o.id = a.outbox_id "
                "WHERE a.target_id = $1 ORDER BY a.started_at DESC, a.id DESC LIMIT $2",
                row["id"], limit)
        return [{**_attempt_view(attempt), "number": attempt["number"],
                 "event": attempt["event"],
                 "notification_status": attempt["notification_status"]} for attempt in rows]

    async def test(self, identity: Identity, target_id: str) -> dict[str, Any]:
        """Post a fixed test line now and record the attempt; 409 while outward
        notifications are off (spec: "Nothing is sent until an administrator switches
        outward notifications on"); 429 past the caller's burst of tests."""
        row = await self._row(identity, target_id)
        if not await self.settings.get("notifications.enabled"):
            raise Conflict("Outward notifications are switched off; an administrator switches "
                           "them on with notifications.enabled.", code="notifications_off")
        wait = self._test_pace.take(identity.account_id, time.monotonic())
        if wait:
            raise TooManyRequests(f"Too many tests in a row; try again in {wait} seconds.",
                                  code="too_many_tests", retry_after=wait)
        url, secret = open_target(self.box, row)
        attempt_id, _ = await start_attempt(row["id"], None)
        if url is None:
            result = UNREADABLE
        else:
            result = await self.sender.post(url, _test_request(row["kind"], secret),
                                            await self.settings.egress_allow_hosts())
        await finish_attempt(attempt_id, result)
        return {"result": result.result.value, "status_code": result.status,
                "detail": result.detail}


def _test_request(kind: str, secret: bytes | None) -> OutgoingRequest:
    return build_request(TargetKind(kind), EventKind.TEST, TEST_TEXT, ids={},
                         idempotency_key=f"test-{secrets.token_hex(16)}",
                         occurred_at=dt.datetime.now(dt.UTC), timestamp=int(time.time()),
                         secret=secret)
