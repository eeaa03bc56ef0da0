"""Reading settings through the cached overrides: answered from memory while fresh,
read again once stale, the same values either way."""

from typing import Any

import pytest

from app.config import BootConfig
from app.services.settings import Settings


class CountingSettings(Settings):
    """Overrides from a dict instead of the database, counting the reads."""

    def __init__(self, overrides: dict[str, Any], cache_seconds: float) -> None:
        super().__init__(BootConfig({"api.rate_per_min": 60}), None, None,  # type: ignore[arg-type]
                         cache_seconds=cache_seconds)
        self.stored, self.reads = overrides, 0

    async def _read_overrides(self, now: float) -> dict[str, Any]:
        self.reads += 1
        self._cached = (now, dict(self.stored))
        return self._cached[1]


@pytest.mark.anyio
async def test_fresh_overrides_are_answered_without_reading_again():
    settings = CountingSettings({}, cache_seconds=3600)
    assert await settings.get("api.rate_per_min") == 60
    settings.stored["api.rate_per_min"] = 120
    assert await settings.get("api.rate_per_min") == 60
    assert (await settings.snapshot())["api.rate_per_min"] == 60
    assert settings.reads == 1
    settings.forget_cache()  # what a write of this process does
    assert await settings.get("api.rate_per_min") == 120 and settings.reads == 2


@pytest.mark.anyio
async def test_stale_overrides_are_read_again_on_every_path():
    settings = CountingSettings({"api.rate_per_min": 30}, cache_seconds=0)
    assert await settings.get("api.rate_per_min") == 30
    assert (await settings.snapshot())["api.rate_per_min"] == 30
    assert settings.reads == 2
