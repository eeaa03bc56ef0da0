"""Fixtures shared by the whole suite.

Async tests run on anyio's pytest plugin with the asyncio backend: mark them with
``@pytest.mark.anyio``.
"""

import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"
