"""The entry announcing an ended call (``core.call_announcement``)."""

from __future__ import annotations

import datetime as dt

from core.call_announcement import (
    MAX_PIECE,
    BookedAppointment,
    CallSummary,
    TakenMessage,
    announcement,
    call_link,
)

STARTED = dt.datetime(2026, 11, 25, 14, 3, 59, tzinfo=dt.timezone(dt.timedelta(hours=1)))


def test_the_link_is_absolute_under_the_public_url_else_relative():
    assert call_link("https://svc.example.org/", "c1") == "https://svc.example.org/calls/c1"
    assert call_link(None, "c1") == "/calls/c1"
    assert call_link("  ", "c1") == "/calls/c1"


def test_who_when_outcome_messages_appointments_and_the_link():
    summary = CallSummary("c1", "+447700900123", "+441632960001", STARTED, "notice_failed",
                          messages=(TakenMessage("Jane Smith", "Lease", "Call me\nback"),),
                          appointments=(BookedAppointment(
                              "K7Q2", dt.datetime(2026, 11, 26, 10, tzinfo=dt.UTC),
                              "Jane Smith", "Viewing"),))
    assert announcement(summary, "/calls/c1") == (
        "Call from +447700900123 to +441632960001 at 2026-11-25 13:03 UTC: notice failed.\n"
        "Message taken from Jane Smith: Lease — Call me back\n"
        "Appointment booked: K7Q2, 2026-11-26 10:00 UTC, Jane Smith — Viewing\n"
        "/calls/c1")


def test_a_withheld_caller_and_a_long_message():
    summary = CallSummary("c1", "", "+441632960001", STARTED, "completed",
                          messages=(TakenMessage(None, "Help", "x" * 1000),))
    first, taken, link = announcement(summary, "/calls/c1").split("\n")
    assert first.startswith("Call from number withheld to")
    assert taken.startswith("Message taken from number withheld: Help — ")
    assert len(taken.split(" — ")[1]) == MAX_PIECE
