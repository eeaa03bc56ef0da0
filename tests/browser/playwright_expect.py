"""Playwright's ``expect`` for the browser tests.

Importing it skips the importing test module, with the notice that says how to enable
the browser tests, where Playwright is not installed.
"""

from __future__ import annotations

import pytest

from tests.browser.harness import ENABLE_NOTICE

expect = pytest.importorskip("playwright.sync_api", reason=ENABLE_NOTICE).expect
