"""A usage record: made per model call, fixed once made, its columns read by name for
the batched insert."""

import uuid

import pytest

from app.services import usage
from app.services.usage import UsageRecord


def test_a_record_takes_its_fields_by_position_or_name_and_defaults_the_rest():
    account, key = uuid.uuid4(), uuid.uuid4()
    by_position = UsageRecord(account, "m", "p", "api", "ok", 10, 5, 100, key)
    by_name = UsageRecord(account_id=account, api_key_id=key, model="m", provider="p",
                          source="api", outcome="ok", prompt_tokens=10, completion_tokens=5,
                          latency_ms=100)
    assert by_position == by_name and by_name.line_id is None
    assert [getattr(by_name, name) for name in usage._FIELDS] == [
        account, key, "m", "p", "api", "ok", 10, 5, 100, None]
    assert UsageRecord(account, "local", "local", "app", "ok").prompt_tokens == 0


def test_a_record_cannot_be_changed_once_buffered():
    record = UsageRecord(None, "m", "p", "api", "ok")
    with pytest.raises(AttributeError):
        record.outcome = "error"  # type: ignore[misc]
