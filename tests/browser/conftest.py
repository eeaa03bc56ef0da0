"""Fixtures of the browser tests: one console server per module, one Chromium per
module, and a fresh browser context (no cookies) per test.

When Chromium or Playwright is missing, every test here is skipped with a notice
saying how to enable them (pytest prints skip reasons with ``-ra``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
from pathlib import Path

import pytest

from tests.browser.harness import (
    ARTIFACTS,
    CHROMIUM_FLAGS,
    ConsoleServer,
    chromium_binary,
    missing_browser,
)

PASSWORD = "correct horse battery staple"
_databases = itertools.count()


def pytest_collection_modifyitems(config, items):
    reason = missing_browser()
    if reason is None:
        return
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="module")
def console(postgres, tmp_path_factory):
    from app.config import BootConfig

    data = tmp_path_factory.mktemp("console-data")
    name = f"svc_console_{os.getpid()}_{next(_databases)}"
    import asyncio

    dsn = asyncio.run(postgres.clone_template(name))
    boot = BootConfig({
        "storage.data_dir": str(data),
        "storage.recordings_dir": str(data / "recordings"),
        "message_encryption_key": secrets.token_hex(32),
        "server.public_url": "http://127.0.0.1:8080",
    })
    server = ConsoleServer(dsn, boot).start()
    try:
        yield server
    finally:
        server.stop()
        asyncio.run(postgres.drop(name))


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=chromium_binary(),
                                              args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


@contextlib.contextmanager
def fresh_tab(browser, console, **options):
    """A page in a context of its own (no cookies), failing the test if a script of
    the page failed."""
    context = browser.new_context(base_url=console.base_url,
                                  **{"viewport": {"width": 1280, "height": 900}, **options})
    context.set_default_timeout(15_000)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield tab
    finally:
        context.close()
    assert errors == [], f"scripts failed in the page: {errors}"


@pytest.fixture
def page(browser, console):
    with fresh_tab(browser, console) as tab:
        yield tab


def screenshot(page, name: str) -> Path:
    """Keep what the screen looked like, for a person to look at afterwards."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def sign_in(page, email: str, password: str = PASSWORD) -> None:
    page.goto("/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/login" not in url)


def open_screen(page, title: str) -> None:
    """Reach a screen the way a person does: by its link in the navigation."""
    page.get_by_role("navigation", name="Screens").get_by_role("link", name=title).click()
    page.get_by_role("heading", level=1, name=title).wait_for()
    settled(page)


def open_as(page, email: str, title: str) -> None:
    """Sign in as ``email`` and open the screen ``title``: where most cases begin."""
    sign_in(page, email)
    open_screen(page, title)


@contextlib.contextmanager
def signed_in_tab(browser, console, email: str, **options):
    """A page signed in as ``email``, to be reused by a whole module's tests."""
    with fresh_tab(browser, console, **options) as tab:
        sign_in(tab, email)
        yield tab


def settled(page) -> None:
    """Wait until the screen has filled itself from the API (its main region is no
    longer busy), so what the test types is not overwritten by the first load."""
    page.locator('main[aria-busy="false"]').wait_for()


def require_api(console, method: str, path: str) -> None:
    """Skip, saying so, when this build has no route at ``path`` yet (the router's own
    404 rather than a refusal: an existing route answers a visitor 401)."""
    import httpx

    answer = httpx.request(method, f"{console.base_url}{path}")
    if answer.status_code == 404 and answer.json()["error"]["message"].startswith("No resource"):
        pytest.skip(f"{method} {path} is not part of this build yet")


def note_beside(page, field):
    """The error note a refused field is marked with, checked to be right under it."""
    from playwright.sync_api import expect

    expect(field).to_have_attribute("aria-invalid", "true")
    note = page.locator(f"#{field.get_attribute('aria-describedby').split()[-1]}")
    box = field.bounding_box()
    assert 0 <= note.bounding_box()["y"] - (box["y"] + box["height"]) < 60
    return note


def removed_from_the_keyboard(page, button, said: str, heading: str) -> None:
    """Press a row's ``button`` from the keyboard and confirm in the dialog it opens,
    which opens on its harmless Cancel, so an Enter pressed out of habit destroys
    nothing; once the status line says ``said``, the row is gone and the keyboard is on
    the list's ``heading`` rather than back at the top of the page."""
    from playwright.sync_api import expect

    button.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Tab")
    expect(dialog.get_by_role("button", name="Confirm")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text(said)
    expect(button).to_have_count(0)
    expect(page.get_by_role("heading", level=2, name=heading)).to_be_focused()
