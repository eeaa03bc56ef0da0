"""Changing runtime settings in a test as the super-administrator would."""

from __future__ import annotations

import uuid
from typing import Any

from app.bundle import Services
from app.services.accounts import Identity

ROOT = Identity(account_id=uuid.uuid4(), email="root@example.com", role="superadmin",
                permissions=frozenset())


async def set_runtime(services: Services, key: str, value: Any) -> None:
    await services.settings.change(ROOT, key, value)


async def allow_loopback(services: Services) -> None:
    """Let the egress gate through to the test's own loopback servers."""
    await set_runtime(services, "egress.allow_hosts", "127.0.0.1")


async def store_unchecked(services: Services, key: str, value: Any) -> None:
    """Put a value in the settings table past today's rules, as a release with looser
    rules may have left it: the paths that read it must still judge it."""
    import json

    from app.tables import RuntimeSetting

    await RuntimeSetting.insert(RuntimeSetting(key=key, value=json.dumps(value))).on_conflict(
        target=RuntimeSetting.key, action="DO UPDATE", values=[RuntimeSetting.value])
    services.settings.forget_cache()
