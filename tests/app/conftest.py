"""Fixtures shared by the application's tests: three signed-in accounts, the fake
upstream a provider row points at, and one window for the audit trail's counts.

``owner``, ``stranger`` and ``admin`` are the headers of a signed-in session each, made
over the served application (``api``); ``owner`` and ``stranger`` are ordinary accounts,
so whatever ``owner`` makes answers 404 to ``stranger`` and stays visible to ``admin``.
"""

from __future__ import annotations

import pytest

from app.services import audit
from tests.fakes.upstream import ScriptedUpstream
from tests.support.diary import NOW
from tests.support.entered import entered


@pytest.fixture(autouse=True)
def one_tally_window(monkeypatch) -> None:
    """Counted audit entries start afresh every ten minutes: a test that counts repeats
    could otherwise straddle two windows and see its counts split. A window of about
    thirty years holds every test."""
    monkeypatch.setattr(audit, "TALLY_WINDOW_SECONDS", 10**9)


@pytest.fixture
async def owner(api, services) -> dict[str, str]:
    """Ann, signed in; the diary's clock stands at ``NOW`` so her bookings lie ahead."""
    services.diary.clock.now = lambda: NOW
    return await api.as_new_user(services, "ann@example.org")


@pytest.fixture
async def stranger(api, services) -> dict[str, str]:
    """Bob, signed in: an ordinary account that owns nothing of Ann's."""
    return await api.as_new_user(services, "bob@example.org")


@pytest.fixture
async def admin(api, services) -> dict[str, str]:
    """An administrator, signed in."""
    return await api.as_new_user(services, "boss@example.org", role="admin")


fake = entered(ScriptedUpstream,
               "The loopback upstream, answering each chat request with its script's next step.")
