"""Outward notifications: the line of text, the bodies for each kind of target, the
webhook signature and the retry schedule (spec: telephony.md "Outward notifications",
"Notification target", "Limits")."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import LocalProtocolError
from core.notifications import (
    MAX_ATTEMPTS,
    MAX_TEXT_LENGTH,
    RETRY_BASE_SECONDS,
    RETRY_CAP_SECONDS,
    SIGNATURE_HEADER,
    EventKind,
    TargetKind,
    build_request,
    is_retryable,
    next_attempt_delay,
    notification_text,
    sign,
    verify_signature,
)

WHEN = "Tuesday 3 March at 2:30 pm"


def text(event=EventKind.APPOINTMENT_BOOKED, **changes):
    fields = {
        "caller_name": "Jane Smith",
        "caller_number": "+447700900123",
        "subject": "a lease renewal",
        "appointment_time": WHEN,
    }
    fields.update(changes)
    return notification_text(event, **fields)


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (
            EventKind.MESSAGE_TAKEN,
            "Message taken: Jane Smith (+447700900123). About: a lease renewal",
        ),
        (
            EventKind.APPOINTMENT_BOOKED,
            f"Appointment booked for {WHEN}: Jane Smith (+447700900123). About: a lease renewal",
        ),
        (
            EventKind.APPOINTMENT_MOVED,
            f"Appointment moved to {WHEN}: Jane Smith (+447700900123). About: a lease renewal",
        ),
        (
            EventKind.APPOINTMENT_CANCELLED,
            f"Appointment cancelled ({WHEN}): Jane Smith (+447700900123). About: a lease renewal",
        ),
    ],
)
def test_the_text_says_who_rang_and_what_it_is_about(event, expected):
    assert text(event) == expected


def test_missing_facts_are_said_plainly():
    assert text(EventKind.MESSAGE_TAKEN, caller_name=None, caller_number="", subject=None) == (
        "Message taken: A caller who gave no name (number withheld)."
    )


def test_an_appointment_event_needs_its_time():
    with pytest.raises(LocalProtocolError):
        text(EventKind.APPOINTMENT_MOVED, appointment_time=None)
    assert text(EventKind.MESSAGE_TAKEN, appointment_time=None).startswith("Message taken")


def test_there_is_no_way_to_pass_what_was_said():
    parameters = set(inspect.signature(notification_text).parameters)
    assert parameters == {"event", "caller_name", "caller_number", "subject", "appointment_time"}


def test_the_text_is_one_line():
    line = text(caller_name="Jane\nSmith\t", subject="line one\r\nline two\u202e\x00")
    assert line == (
        f"Appointment booked for {WHEN}: Jane Smith (+447700900123). About: line one line two"
    )


def test_a_long_subject_is_cut_and_who_rang_survives():
    line = text(subject="word " * 200)
    assert len(line) == MAX_TEXT_LENGTH
    assert line.endswith("…")
    assert "Jane Smith (+447700900123)" in line


def test_a_long_name_is_cut_so_the_number_survives():
    line = text(caller_name="Bartholomew " * 30)
    assert "(+447700900123)" in line and len(line) <= MAX_TEXT_LENGTH


@given(
    st.sampled_from(EventKind),
    st.one_of(st.none(), st.text()),
    st.one_of(st.none(), st.text()),
    st.one_of(st.none(), st.text()),
    st.text(min_size=1).filter(lambda t: any(c.isprintable() and not c.isspace() for c in t)),
)
def test_any_facts_give_one_line_of_at_most_300_characters(event, name, number, subject, when):
    line = notification_text(
        event, caller_name=name, caller_number=number, subject=subject, appointment_time=when
    )
    assert 0 < len(line) <= MAX_TEXT_LENGTH
    assert line.isprintable()


NOW = datetime(2026, 3, 3, 14, 30, 5, tzinfo=UTC)
IDS = {"call_id": "c-1", "appointment_id": "a-9"}


def request(target, line="Message taken: Jane <Smith> & Co (+44). About: *bold* [x](y)", **extra):
    return build_request(
        target,
        EventKind.MESSAGE_TAKEN,
        line,
        ids=IDS,
        idempotency_key="k-123",
        occurred_at=NOW,
        timestamp=1_772_548_205,
        **extra,
    )


def test_chat_a_is_a_slack_compatible_text_with_reserved_characters_escaped():
    sent = request(TargetKind.CHAT_A)
    assert json.loads(sent.body) == {
        "text": "Message taken: Jane &lt;Smith&gt; &amp; Co (+44). About: *bold* [x](y)"
    }
    assert sent.headers == (("Content-Type", "application/json"),)


def test_chat_b_is_a_teams_compatible_message_card_with_markup_escaped():
    sent = request(TargetKind.CHAT_B)
    card = json.loads(sent.body)
    assert card["@type"] == "MessageCard"
    assert card["@context"] == "https://schema.org/extensions"
    assert card["text"] == (
        r"Message taken: Jane &lt;Smith&gt; &amp; Co \(+44\). About: \*bold\* \[x\]\(y\)"
    )
    assert card["summary"].startswith("Message taken: Jane <Smith>") and len(card["summary"]) <= 80
    assert sent.headers == (("Content-Type", "application/json"),)


def test_a_webhook_carries_event_text_ids_and_the_idempotency_key():
    sent = request(TargetKind.WEBHOOK, line="Message taken: Zoë (+44).")
    assert json.loads(sent.body) == {
        "event": "message_taken",
        "text": "Message taken: Zoë (+44).",
        "ids": IDS,
        "idempotency_key": "k-123",
        "occurred_at": "2026-03-03T14:30:05+00:00",
    }
    assert "Zoë".encode() in sent.body  # UTF-8, not \\u escapes
    assert dict(sent.headers) == {"Content-Type": "application/json", "Idempotency-Key": "k-123"}


def test_a_webhook_with_a_secret_is_signed_over_the_exact_body():
    sent = request(TargetKind.WEBHOOK, secret=b"s3cret")
    value = dict(sent.headers)[SIGNATURE_HEADER]
    expected = hmac.new(b"s3cret", b"1772548205." + sent.body, hashlib.sha256).hexdigest()
    assert value == f"t=1772548205,v1={expected}"
    assert verify_signature(b"s3cret", sent.body, value, now=1_772_548_205 + 60)


def test_the_same_notification_gives_the_same_bytes_on_every_retry():
    assert request(TargetKind.WEBHOOK, secret=b"s") == request(TargetKind.WEBHOOK, secret=b"s")


def test_a_webhook_needs_an_aware_time():
    with pytest.raises(LocalProtocolError):
        build_request(
            TargetKind.WEBHOOK,
            EventKind.MESSAGE_TAKEN,
            "x",
            ids={},
            idempotency_key="k",
            occurred_at=datetime(2026, 3, 3),
            timestamp=0,
        )


def test_an_empty_secret_is_refused():
    with pytest.raises(LocalProtocolError):
        sign(b"", b"{}", 0)


GOOD = sign(b"s", b"{}", 100)


def test_a_fitting_signature_is_accepted_within_five_minutes():
    assert verify_signature(b"s", b"{}", GOOD, now=100)
    assert verify_signature(b"s", b"{}", GOOD, now=400)
    assert verify_signature(b"s", b"{}", GOOD, now=-200)


@pytest.mark.parametrize(
    ("secret", "body", "now", "value"),
    [
        (b"other", b"{}", 100, GOOD),  # the wrong secret
        (b"", b"{}", 100, GOOD),
        (b"s", b"{ }", 100, GOOD),  # a changed body
        (b"s", b"{}", 401, GOOD),  # too old
        (b"s", b"{}", -201, GOOD),  # from the future
        (b"s", b"{}", 100, GOOD.replace("t=100", "t=101")),  # a changed timestamp
        (b"s", b"{}", 100, GOOD.replace("t=100", "t=١٠٠")),  # digits, but not ASCII ones
        (b"s", b"{}", 100, "t=" + "9" * 5000 + ",v1=00"),
        (b"s", b"{}", 100, "garbage"),
        (b"s", b"{}", 100, ""),
    ],
)
def test_a_signature_that_does_not_fit_is_refused(secret, body, now, value):
    assert not verify_signature(secret, body, value, now)


@given(st.text())
def test_verifying_any_header_never_raises(value):
    assert verify_signature(b"s", b"{}", value, now=0) in (True, False)


def test_the_retry_schedule_doubles_to_a_cap_and_ends():
    delays = [next_attempt_delay(attempt) for attempt in range(1, MAX_ATTEMPTS + 2)]
    assert delays[: MAX_ATTEMPTS - 1] == [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]
    assert delays[MAX_ATTEMPTS - 1 :] == [None, None]
    assert RETRY_BASE_SECONDS == delays[0] and RETRY_CAP_SECONDS == max(d for d in delays if d)


def test_jitter_is_passed_in_and_lengthens_by_at_most_a_fifth():
    assert next_attempt_delay(1, jitter=0.0) == 30
    assert next_attempt_delay(1, jitter=0.5) == 33
    assert next_attempt_delay(8, jitter=1.0) == 3600 * 1.2
    assert next_attempt_delay(MAX_ATTEMPTS, jitter=1.0) is None


@pytest.mark.parametrize(
    ("attempt", "jitter"), [(0, 0.0), (-1, 0.0), (1, -0.1), (1, 1.5), (1, float("nan"))]
)
def test_the_schedule_refuses_nonsense(attempt, jitter):
    with pytest.raises(LocalProtocolError):
        next_attempt_delay(attempt, jitter)


@given(st.integers(1, 100), st.floats(0, 1))
def test_delays_never_shrink_and_stay_bounded(attempt, jitter):
    delay = next_attempt_delay(attempt, jitter)
    if attempt >= MAX_ATTEMPTS:
        assert delay is None
    else:
        assert RETRY_BASE_SECONDS <= delay <= RETRY_CAP_SECONDS * 1.2
        assert delay >= next_attempt_delay(max(1, attempt - 1), 0.0)


@pytest.mark.parametrize(
    ("status", "retry"),
    [(None, True), (500, True), (502, True), (503, True), (408, True), (429, True)]
    + [(400, False), (401, False), (403, False), (404, False), (410, False), (200, False)],
)
def test_only_failures_that_pass_with_time_are_retried(status, retry):
    assert is_retryable(status) is retry
