"""A fixture for a thing that is used inside ``async with``: a fake server, a client."""

from __future__ import annotations

__all__ = ["entered"]

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest


def entered(factory: Callable[[], AbstractAsyncContextManager[Any]], doc: str | None = None):
    """A fixture that enters ``factory()`` for the test and leaves it once the test is
    over. Bind it to the fixture's name (``speech = entered(FakeSpeech)``)."""

    async def fixture() -> AsyncIterator[Any]:
        async with factory() as value:
            yield value

    fixture.__doc__ = doc
    return pytest.fixture(fixture)
