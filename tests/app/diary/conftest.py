"""Fixtures of the diary's tests."""

from __future__ import annotations

import pytest

from tests.app.diary.calls import a_target
from tests.support.diary import LONDON_DIARY, NOW


@pytest.fixture
async def diary(services, owner):
    """The owner's diary, open on weekdays, at ``NOW``, with a target for every event.

    ``owner`` is an account id here: the tests that ask for a diary take the pipeline's
    owner (an account with the fake provider).
    """
    services.diary.clock.now = lambda: NOW
    await services.diary.diaries.put(owner, LONDON_DIARY, actor=owner)
    await a_target(owner)
    return owner
