"""The built-in ``end_call`` tool: what it records and where it is offered."""

from __future__ import annotations

import uuid

import pytest

from app.services.builtin_tools import END_CALL, ON_EVERY_CALL, end_call
from app.services.call_context import CallContext
from core.pipeline import ToolFailed

pytestmark = pytest.mark.anyio


async def test_end_call_records_the_agents_decision_and_says_goodbye():
    call = CallContext(uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), "+441632960777")
    result = await end_call({}, call)
    assert call.end_requested
    assert result["ending"] is True and "Goodbye" in result["text"]


async def test_end_call_refuses_outside_a_call():
    with pytest.raises(ToolFailed, match="telephone call"):
        await end_call({}, None)


def test_every_call_offers_end_call():
    assert END_CALL.name in ON_EVERY_CALL and END_CALL.usable_on_call
