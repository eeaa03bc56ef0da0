"""Outward notifications: the line of text, the request bodies, the signature and the
retry schedule.

spec: telephony.md "Outward notifications" — events ``message_taken``,
``appointment_booked``, ``appointment_moved``, ``appointment_cancelled``. "The text
sent is who rang and what it is about, capped at 300 characters, never any of what
was said." "Deciding to notify and posting are separate: the call never waits, and a
failing destination is retried."

``notification_text`` takes structured facts only — there is no parameter a
transcript could travel through. ``build_request`` wraps the text for the target's
kind ("Notification target": ``chat_a``, ``chat_b``, ``webhook``); the adapter posts
the body after ``core.egress.check_egress`` allows the URL. ``next_attempt_delay`` and
``is_retryable`` decide what happens after a failed attempt.

Wire formats:

* ``chat_a``: a Slack-compatible incoming webhook, ``{"text": …}``, with ``&``, ``<``
  and ``>`` escaped as that format asks (so a name cannot become a mention or a link).
* ``chat_b``: a Microsoft Teams-compatible incoming webhook, a MessageCard with
  ``summary`` and ``text``; markdown and HTML characters are escaped.
* ``webhook``: JSON ``{"event", "text", "ids", "idempotency_key", "occurred_at"}``,
  headers ``Idempotency-Key`` and, when the target has a secret, ``X-Svc-Signature:
  t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>." + body>`` so a receiver can check
  both the sender and the freshness.
"""

from __future__ import annotations

__all__ = [
    "MAX_ATTEMPTS",
    "MAX_TEXT_LENGTH",
    "RETRY_BASE_SECONDS",
    "RETRY_CAP_SECONDS",
    "SIGNATURE_HEADER",
    "TARGET_EVENTS",
    "TARGET_EVENT_NAMES",
    "EventKind",
    "OutgoingRequest",
    "TargetKind",
    "build_request",
    "is_retryable",
    "next_attempt_delay",
    "notification_text",
    "sign",
    "verify_signature",
]

import enum
import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import datetime

from .errors import LocalProtocolError
from .records import frozen

# spec: telephony.md "Limits" — "Outward notification line: 300 characters".
MAX_TEXT_LENGTH = 300
# Who rang must survive the cap whatever the subject: a name is cut well before it.
_MAX_NAME_LENGTH = 80
_ELLIPSIS = "…"

SIGNATURE_HEADER = "X-Svc-Signature"

# The retry schedule (the spec leaves it to us): 30 s after the first failure, doubling
# up to an hour, ten attempts in all — about three and a half hours of trying.
RETRY_BASE_SECONDS = 30.0
RETRY_CAP_SECONDS = 3600.0
MAX_ATTEMPTS = 10
#: The most jitter can add to a delay, as a fraction of it.
_JITTER_SPREAD = 0.2


class EventKind(enum.Enum):
    """What happened (spec: telephony.md "Outward notifications")."""

    #: A message or enquiry was taken.
    MESSAGE_TAKEN = "message_taken"
    #: An appointment was booked.
    APPOINTMENT_BOOKED = "appointment_booked"
    #: An appointment was moved.
    APPOINTMENT_MOVED = "appointment_moved"
    #: An appointment was cancelled.
    APPOINTMENT_CANCELLED = "appointment_cancelled"
    #: A target's live test (``POST /api/notify-targets/{id}/test``); never an event
    #: of the outbox, never in a target's events filter.
    TEST = "test"


#: The events a target can ask for (spec: telephony.md "Notification target").
TARGET_EVENTS = tuple(kind for kind in EventKind if kind is not EventKind.TEST)
#: Their names, as a target's events filter stores them.
TARGET_EVENT_NAMES = tuple(kind.value for kind in TARGET_EVENTS)


class TargetKind(enum.Enum):
    """Where a notification goes (spec: telephony.md "Notification target")."""

    #: A team-chat service with Slack-compatible incoming webhooks.
    CHAT_A = "chat_a"
    #: A team-chat service with Microsoft Teams-compatible incoming webhooks.
    CHAT_B = "chat_b"
    #: A generic JSON webhook.
    WEBHOOK = "webhook"


def _clean(value: str | None, limit: int = MAX_TEXT_LENGTH) -> str:
    """One line: control characters and runs of whitespace become single spaces."""
    if not value:
        return ""
    flat = "".join(char if char.isprintable() else " " for char in value)
    return _cap(" ".join(flat.split()), limit)


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(_ELLIPSIS)].rstrip() + _ELLIPSIS


def notification_text(
    event: EventKind,
    *,
    caller_name: str | None,
    caller_number: str | None,
    subject: str | None,
    appointment_time: str | None = None,
) -> str:
    """The line sent for ``event``: who rang and what it is about, at most 300
    characters. ``appointment_time`` is the spoken time (``speak_time``) and is
    required for the appointment events.

    "Appointment booked for Tuesday 3 March at 2:30 pm: Jane Smith (+447700900123).
    About: a lease renewal"
    """
    who = _clean(caller_name, _MAX_NAME_LENGTH) or "A caller who gave no name"
    number = _clean(caller_number, _MAX_NAME_LENGTH) or "number withheld"
    text = f"{_headline(event, _clean(appointment_time, _MAX_NAME_LENGTH))}: {who} ({number})."
    about = _clean(subject)
    if about:
        text = f"{text} About: {about}"
    return _cap(text, MAX_TEXT_LENGTH)


def _headline(event: EventKind, when: str) -> str:
    if event is EventKind.MESSAGE_TAKEN:
        return "Message taken"
    if event is EventKind.TEST:
        return "Test notification"
    if not when:
        raise LocalProtocolError(f"{event.value} needs the appointment time")
    if event is EventKind.APPOINTMENT_BOOKED:
        return f"Appointment booked for {when}"
    if event is EventKind.APPOINTMENT_MOVED:
        return f"Appointment moved to {when}"
    return f"Appointment cancelled ({when})"


@frozen
class OutgoingRequest:
    """A POST for the adapter to send: the exact body bytes and the headers."""

    body: bytes
    headers: tuple[tuple[str, str], ...]


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _escape_chat_a(text: str) -> str:
    # Slack-compatible formatting reserves these three; escaped, a caller's name
    # cannot become <!channel> or a link.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_MARKDOWN = str.maketrans({char: f"\\{char}" for char in "\\`*_~[]()#|"})


def _escape_chat_b(text: str) -> str:
    # Teams-compatible cards render markdown and some HTML in ``text``.
    return _escape_chat_a(text).translate(_MARKDOWN)


def _chat_b_card(text: str) -> dict[str, object]:
    return {
        "@type": "MessageCard",
        "@context": "https://schema.org/extensions",
        "summary": _cap(text, 80),
        "text": _escape_chat_b(text),
    }


def build_request(
    target: TargetKind,
    event: EventKind,
    text: str,
    *,
    ids: Mapping[str, str],
    idempotency_key: str,
    occurred_at: datetime,
    timestamp: int,
    secret: bytes | None = None,
) -> OutgoingRequest:
    """The request for one attempt to one target.

    ``ids`` names what the event is about (``{"call_id": …, "appointment_id": …}``);
    ``idempotency_key`` stays the same over every retry of one notification, so a
    webhook receiver can drop repeats. ``timestamp`` (Unix seconds, now) and
    ``secret`` sign a webhook; chat targets ignore them, as they do ``ids``.
    """
    headers = [("Content-Type", "application/json")]
    if target is TargetKind.CHAT_A:
        return OutgoingRequest(_json({"text": _escape_chat_a(text)}), tuple(headers))
    if target is TargetKind.CHAT_B:
        return OutgoingRequest(_json(_chat_b_card(text)), tuple(headers))
    if occurred_at.utcoffset() is None:
        raise LocalProtocolError(f"occurred_at must be aware, not {occurred_at!r}")
    body = _json(
        {
            "event": event.value,
            "text": text,
            "ids": {str(key): str(value) for key, value in ids.items()},
            "idempotency_key": idempotency_key,
            "occurred_at": occurred_at.isoformat(),
        }
    )
    headers.append(("Idempotency-Key", idempotency_key))
    if secret is not None:
        headers.append((SIGNATURE_HEADER, sign(secret, body, timestamp)))
    return OutgoingRequest(body, tuple(headers))


def _mac(secret: bytes, body: bytes, timestamp: int) -> str:
    return hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def sign(secret: bytes, body: bytes, timestamp: int) -> str:
    """The value of ``X-Svc-Signature`` for ``body`` sent at ``timestamp``."""
    if not secret:
        raise LocalProtocolError("a signing secret must not be empty")
    return f"t={timestamp},v1={_mac(secret, body, timestamp)}"


def verify_signature(
    secret: bytes, body: bytes, header_value: str, now: int, *, tolerance: int = 300
) -> bool:
    """What a receiver does: whether ``header_value`` signs ``body`` with ``secret``
    and was made within ``tolerance`` seconds of ``now``. Used by the target test."""
    fields = dict(part.split("=", 1) for part in header_value.split(",") if "=" in part)
    timestamp, given = fields.get("t", ""), fields.get("v1", "")
    if not (secret and timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 20):
        return False
    if abs(now - int(timestamp)) > tolerance:
        return False
    return hmac.compare_digest(_mac(secret, body, int(timestamp)), given)


def next_attempt_delay(attempt: int, jitter: float = 0.0) -> float | None:
    """Seconds to wait after failed attempt number ``attempt`` (1 is the first send)
    before the next one, or ``None`` when no attempt is left.

    ``jitter`` in [0, 1], drawn by the caller, lengthens the delay by up to a fifth so
    that many notifications failing together do not retry together.
    """
    if attempt < 1:
        raise LocalProtocolError(f"attempts are counted from 1, not {attempt}")
    if not 0.0 <= jitter <= 1.0:
        raise LocalProtocolError(f"jitter must be from 0 to 1, not {jitter}")
    if attempt >= MAX_ATTEMPTS:
        return None
    delay = min(RETRY_CAP_SECONDS, RETRY_BASE_SECONDS * 2 ** (attempt - 1))
    return delay * (1.0 + _JITTER_SPREAD * jitter)


def is_retryable(status: int | None) -> bool:
    """Whether a failed attempt is worth repeating. ``status`` is the HTTP status, or
    ``None`` when no response came (timeout, refused connection). Server errors,
    408 and 429 pass with time; any other answer will not change, and neither will a
    refusal by the egress gate (not an attempt to retry at all)."""
    if status is None:
        return True
    return status >= 500 or status in (408, 429)
