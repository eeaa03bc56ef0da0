"""Stored values as the API's JSON shows them."""

from __future__ import annotations

import datetime as dt
from uuid import UUID

from app.services.views import json_value, view_of

_ID = UUID("12345678-1234-5678-1234-567812345678")
_AT = dt.datetime(2026, 11, 26, 9, 30, tzinfo=dt.UTC)


def test_ids_become_text_and_times_iso_8601_and_the_rest_stays():
    assert json_value(_ID) == "12345678-1234-5678-1234-567812345678"
    assert json_value(_AT) == "2026-11-26T09:30:00+00:00"
    assert [json_value(v) for v in (None, 3, "x", True, ["a"])] == [None, 3, "x", True, ["a"]]


def test_a_view_shows_the_columns_named_and_no_others():
    row = {"id": _ID, "created_at": _AT, "note": None, "secret_enc": "sealed"}
    assert view_of(row, ("id", "created_at", "note")) == {
        "id": str(_ID), "created_at": _AT.isoformat(), "note": None}
