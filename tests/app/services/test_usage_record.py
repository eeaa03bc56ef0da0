"""A usage record: made per model call, fixed once made, and copied to the usage
table field by field, each field the column of the same name."""

import uuid

import pytest

from app.tables import UsageEvent
from app.services.usage import UsageRecord


def test_a_record_takes_its_fields_by_position_or_name_and_defaults_the_rest():
    account, key = uuid.uuid4(), uuid.uuid4()
    by_position = UsageRecord(account, "m", "p", "api", "ok", 10, 5, 100, key)
    by_name = UsageRecord(account_id=account, api_key_id=key, model="m", provider="p",
                          source="api", outcome="ok", prompt_tokens=10, completion_tokens=5,
                          latency_ms=100)
    assert by_position == by_name and by_name.line_id is None
    assert tuple(by_name) == (account, "m", "p", "api", "ok", 10, 5, 100, key, None)
    assert UsageRecord(account, "local", "local", "app", "ok").prompt_tokens == 0


def test_a_record_cannot_be_changed_once_buffered():
    record = UsageRecord(None, "m", "p", "api", "ok")
    with pytest.raises(AttributeError):
        record.outcome = "error"  # type: ignore[misc]


def test_each_field_is_a_column_of_the_usage_table():
    columns = {column._meta.name for column in UsageEvent._meta.columns}
    assert set(UsageRecord._fields) <= columns
