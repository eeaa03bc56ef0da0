"""Every console screen in a browser at a laptop's and a phone's width, filled with
realistic data (names of 120 characters): nothing scrolls sideways, axe-core finds no
serious or critical accessibility problem, the navigation folds on a phone, focus is
visible, and a form's error is shown beside its field in words a person uses.

One browser page is reused for the whole module (signed in once), so the screens are
visited quickly one after another.
"""

from __future__ import annotations

import httpx
import pytest

from app.console.screens import SCREENS
from tests.browser.conftest import PASSWORD, screenshot, signed_in_tab
from tests.browser.harness import (
    accessibility_violations,
    sideways_scroll,
)
from tests.browser.playwright_expect import expect

ROOT = "root-of-a-rather-long-organisation-name@example.com"
LONG = ("Northern Regional Dental Practice and Orthodontic Surgery Reception Desk, "
        "Weekday Mornings and Saturday Emergency Cover.")
WIDTHS = {"laptop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
PAGES = ["/", *[screen.path for screen in SCREENS], "/no/such/screen"]


def _created(answer: httpx.Response) -> dict:
    assert answer.status_code < 300, answer.text
    return answer.json()


@pytest.fixture(scope="module")
def seeded(console):
    """A superadmin with one of everything, each named at length."""
    assert len(LONG) == 120
    root = console.run(console.services.accounts.create(ROOT, PASSWORD, "superadmin", ()))
    with httpx.Client(base_url=console.base_url) as client:
        _created(client.post("/api/auth/login", json={"email": ROOT, "password": PASSWORD}))
        _created(client.post("/api/libraries", json={"name": LONG, "description": LONG}))
        agent = _created(client.post("/api/agents", json={"name": LONG, "model": "local",
                                                          "instructions": LONG}))
        _created(client.post("/api/profile/api-keys", json={"name": LONG}))
        _created(client.post("/api/admin/users", json={
            "email": f"{'a' * 100}@example.com", "password": PASSWORD, "role": "user"}))
        _created(client.post("/api/admin/telephony/numbers", json={
            "e164": "+441632960001", "agent_id": agent["id"], "owner_user_id": str(root["id"]),
            "label": LONG, "greeting": LONG}))
        _created(client.put("/api/diary", json={
            "timezone": "Europe/London", "slot_minutes": 30, "lead_minutes": 0,
            "horizon_days": 14, "enabled": True,
            "hours": [{"weekday": 0, "opens_minute": 540, "closes_minute": 1020}]}))
        _created(client.post("/api/diary/closures", json={"closed_on": "2030-12-25",
                                                          "note": LONG}))
        _created(client.post("/api/conflict-names", json={"names": LONG, "note": LONG}))
    return root


@pytest.fixture(scope="module")
def tab(console, seeded, browser):
    """One page for the module, signed in as the superadmin. The page's own policy
    allows no inline script, which is how axe-core is put in; the test lifts it."""
    with signed_in_tab(browser, console, ROOT, bypass_csp=True,
                       viewport=WIDTHS["laptop"]) as page:
        yield page


def _visit(page, path: str, width: str) -> None:
    page.set_viewport_size(WIDTHS[width])
    page.goto(path)
    page.locator('main:not([aria-busy="true"])').wait_for()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_no_screen_scrolls_sideways_or_has_a_serious_accessibility_problem(tab, path, width):
    _visit(tab, path, width)
    name = path.strip("/").replace("/", "-") or "home"
    screenshot(tab, f"width-{width}-{name}")
    assert sideways_scroll(tab) <= 0, f"{path} scrolls sideways at {WIDTHS[width]['width']} px"
    assert accessibility_violations(tab) == []


def test_the_lines_actions_stay_in_view_at_a_laptops_width(tab):
    _visit(tab, "/admin/telephone", "laptop")
    row = tab.get_by_role("row", name=LONG[:40])
    for action in ("Edit", "Enable", "Release"):
        button = row.get_by_role("button", name=f"{action} +441632960001", exact=True)
        expect(button).to_be_visible()
        box = button.bounding_box()
        assert box["x"] + box["width"] <= WIDTHS["laptop"]["width"]


def test_on_a_phone_the_navigation_folds_behind_a_menu_button(tab):
    _visit(tab, "/", "phone")
    menu = tab.get_by_role("button", name="Menu")
    nav = tab.get_by_role("navigation", name="Screens")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(nav).to_be_hidden()
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(nav.get_by_role("link", name="Libraries")).to_be_visible()
    nav.get_by_role("link", name="Libraries").focus()
    tab.keyboard.press("Escape")  # closes it from within, back on the button
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(nav).to_be_hidden()
    expect(menu).to_be_focused()
    _visit(tab, "/", "laptop")
    expect(tab.get_by_role("button", name="Menu")).to_be_hidden()
    expect(nav).to_be_visible()


def test_the_keyboard_reaches_the_page_with_a_visible_focus(tab):
    _visit(tab, "/libraries", "laptop")
    tab.keyboard.press("Tab")
    focused = tab.evaluate("""() => { const e = document.activeElement;
        return [e.textContent.trim(), getComputedStyle(e).outlineStyle]; }""")
    assert focused == ["Skip to the content", "solid"]


def test_a_forms_error_is_shown_beside_its_field_in_plain_words(tab):
    _visit(tab, "/owner/diary", "laptop")
    closes = tab.get_by_label("Monday period 1 closes")
    closes.fill("08:00")
    tab.get_by_role("button", name="Save hours").click()
    expect(closes).to_have_attribute("aria-invalid", "true")
    note = tab.locator(f"#{closes.get_attribute('aria-describedby').split()[-1]}")
    expect(note).to_have_text("Closing time must be after opening time.")
    field, beside = closes.bounding_box(), note.bounding_box()
    assert 0 <= beside["y"] - field["y"] < 100  # right under the field, not at the top
    expect(closes).to_be_focused()
    status = tab.get_by_role("status")
    expect(status).to_have_class("status error")
    expect(status).to_contain_text("Closing time must be after opening time.")
    expect(status).to_contain_text("Reference: ")
    screenshot(tab, "form-error-beside-field")
    closes.fill("17:00")  # typing again clears the mark
    expect(closes).not_to_have_attribute("aria-invalid", "true")
    tab.get_by_role("button", name="Save hours").click()
    expect(status).to_have_class("status ok")


def test_the_apis_field_paths_are_put_in_the_forms_words(tab):
    _visit(tab, "/", "laptop")
    said = tab.evaluate("""async () => {
        const { ApiError, fieldOf, inWords } = await import("/static/console.js");
        const form = document.createElement("form");
        form.innerHTML = `<p><label for="n">Number</label><input id="n" name="e164"></p>
          <div data-row="hours"><input data-field="opens_minute" data-label="Opening time">
            <input data-field="closes_minute" data-label="Closing time"></div>
          <div data-row="hours"><input data-field="opens_minute" data-label="Opening time">
            <input data-field="closes_minute" data-label="Closing time" id="second"></div>`;
        document.body.append(form);
        const words = (message, field) => {
          const error = new ApiError(422, { error: { message, field } }, "/api/x");
          return inWords(form, error, fieldOf(form, field));
        };
        const said = [
          words("hours[1].closes_minute: must be after opens_minute", "hours[1].closes_minute"),
          fieldOf(form, "hours.1.closes_minute").id,
          words("e164 is already registered.", "e164"),
          words("slot_minutes: Input should be a valid integer.", "slot_minutes"),
        ];
        form.remove();
        return said;
    }""")
    assert said == ["Closing time must be after opening time.", "second",
                    "Number is already registered.",
                    "Slot minutes: Input should be a valid integer."]


def test_on_a_phone_escape_in_a_field_leaves_the_menu_open(tab):
    _visit(tab, "/owner/diary", "phone")
    menu = tab.get_by_role("button", name="Menu")
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    zone = tab.get_by_label("Time zone (IANA, e.g. Europe/London)")
    zone.focus()
    tab.keyboard.press("Escape")  # dismisses the field's suggestions, nothing more
    expect(zone).to_be_focused()
    expect(menu).to_have_attribute("aria-expanded", "true")
    menu.focus()
    tab.keyboard.press("Escape")  # on the button itself it still folds the menu
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(menu).to_be_focused()
