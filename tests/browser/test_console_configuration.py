"""The configuration screen in a browser at a laptop's and a phone's width: settings
grouped by area and found by searching; an area saved with one button; every value
refused shown beside its field with nothing changed; a reset; no sideways scroll and
no serious accessibility problem. And a Library's documents listed with their size in
units, the start of their text and whether searches find them.
"""

from __future__ import annotations

import pytest

from app.services.accounts import Identity
from tests.browser.conftest import (
    PASSWORD,
    fresh_tab,
    note_beside,
    screenshot,
    settled,
    sign_in,
)
from tests.browser.harness import (
    ARTIFACTS,
    accessibility_violations,
    sideways_scroll,
)
from tests.browser.playwright_expect import expect

ADMIN = "settings-admin@example.com"
WIDTHS = {"laptop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
CALLS = "telephony.max_concurrent_calls"
TOOLS = "telephony.tool_timeout_secs"


@pytest.fixture(scope="module")
def admin(console):
    return console.run(console.services.accounts.create(ADMIN, PASSWORD, "admin", ()))


@pytest.fixture
def page(console, browser):  # the server first: it starts outside the browser's loop
    """A fresh tab whose page policy lets axe-core in (it is added as an inline script,
    which the console's own policy forbids)."""
    with fresh_tab(browser, console, bypass_csp=True, viewport=WIDTHS["laptop"]) as tab:
        yield tab


@pytest.fixture
def fresh_limits(console, admin):
    """Both widths start from the boot values of the two limits they change."""
    identity = Identity.from_row(admin)
    for key in (CALLS, TOOLS):
        console.run(console.services.settings.reset(identity, key))


def _value(console, key):
    return console.run(console.services.settings.get(key))


def _open(page, width: str) -> None:
    page.set_viewport_size(WIDTHS[width])
    sign_in(page, ADMIN)
    page.goto("/admin/configuration")
    settled(page)


def _fits(page, width: str, name: str) -> None:
    screenshot(page, f"configuration-{name}-{width}")
    assert sideways_scroll(page) <= 0, f"{name} scrolls sideways at {WIDTHS[width]['width']} px"
    assert accessibility_violations(page) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_settings_are_grouped_by_area_and_found_by_search(page, console, admin, width):
    _open(page, width)
    for title in ("Voice", "Telephony", "Notifications", "Retention", "Limits"):
        expect(page.get_by_role("heading", level=2, name=title, exact=True)).to_be_visible()
    limits = page.get_by_role("region", name="Limits")
    row = limits.locator(f'tr[data-key="{CALLS}"]')
    expect(row).to_contain_text("Calls answered at once")  # what it does
    expect(row).to_contain_text("Default: 2.")
    expect(row).to_contain_text("config.manage")  # who may change it
    expect(row).to_contain_text("1 to 100000")
    rate = page.locator('tr[data-key="voice_live.stt_sample_rate"]')
    expect(rate).to_contain_text("one of 8000, 16000")
    # Each cell carries its column's heading, shown beside it where rows become cards.
    assert row.locator("td").evaluate_all("cells => cells.map((c) => c.dataset.label)") == [
        "Setting", "Boot value", "Current value", "Range", "Who may change it", "New value"]
    _fits(page, width, "areas")

    search = page.get_by_label("Search settings")
    search.fill("concurrent")
    expect(row).to_be_visible()
    expect(page.locator("#areas section:visible")).to_have_count(1)
    expect(page.locator("#areas tr[data-key]:visible")).to_have_count(1)
    expect(page.locator("#search-count")).to_have_text(
        f"1 of {page.locator('#areas tr[data-key]').count()} settings match.")
    search.fill("recogniser samples")  # words of a description, in any order
    expect(page.locator("#areas tr[data-key]:visible")).to_have_count(1)
    expect(rate).to_be_visible()
    expect(row).to_be_hidden()
    _fits(page, width, "search")
    search.fill("no such words anywhere")
    expect(page.locator("#search-count")).to_contain_text("No setting matches")
    expect(page.locator("#areas section:visible")).to_have_count(0)
    search.fill("")
    expect(row).to_be_visible()
    expect(page.locator("#search-count")).to_have_text("")


@pytest.mark.parametrize("width", WIDTHS)
def test_an_area_is_saved_at_once_and_each_refusal_shows_beside_its_field(page, console,
                                                                          fresh_limits, width):
    _open(page, width)
    limits = page.get_by_role("region", name="Limits")
    calls = limits.get_by_label(f"New value of {CALLS}")
    tools = limits.get_by_label(f"New value of {TOOLS}")
    calls.fill("5")
    tools.fill("20")
    limits.get_by_role("button", name="Save Limits").click()
    expect(page.get_by_role("status")).to_contain_text(f"Limits is saved: {CALLS}, {TOOLS}.")
    assert (_value(console, CALLS), _value(console, TOOLS)) == (5, 20)
    expect(limits.locator(f'tr[data-key="{CALLS}"] td').nth(2)).to_contain_text("5 runtime")
    # Nothing else in the area became a runtime value.
    expect(limits.locator(".badge")).to_have_count(2)

    calls = limits.get_by_label(f"New value of {CALLS}")
    tools = limits.get_by_label(f"New value of {TOOLS}")
    calls.fill("0")
    tools.fill("61")
    limits.get_by_role("button", name="Save Limits").click()
    status = page.get_by_role("status")
    expect(status).to_contain_text("2 settings were refused; nothing was changed.")
    expect(status).to_contain_text("Reference: ")
    for field, words in ((calls, f"{CALLS} must be at least 1."),
                         (tools, f"{TOOLS} must be at most 60.")):
        expect(note_beside(page, field)).to_have_text(words)
    expect(calls).to_be_focused()  # the first refused
    assert (_value(console, CALLS), _value(console, TOOLS)) == (5, 20)
    _fits(page, width, "refused")
    limits.screenshot(path=str(ARTIFACTS / f"configuration-limits-refused-{width}.png"))

    calls.fill("6")  # typing again clears the marks
    expect(calls).not_to_have_attribute("aria-invalid", "true")
    limits.get_by_role("button", name=f"Reset {CALLS}").click()
    expect(page.get_by_role("status")).to_contain_text(f"{CALLS} is back to its boot value")
    expect(limits.locator(f'tr[data-key="{CALLS}"] td').nth(2)).to_have_text("2")
    assert _value(console, CALLS) == 2


def test_an_area_with_nothing_changed_sends_nothing(page, console, fresh_limits):
    _open(page, "laptop")
    requests = []
    page.on("request", lambda request: requests.append(request.method)
            if request.method == "PATCH" else None)
    page.get_by_role("button", name="Save Limits").click()
    expect(page.get_by_role("status")).to_have_text("Nothing changed in Limits.")
    assert requests == []


def test_documents_show_their_size_in_units_a_preview_and_whether_they_are_searchable(
        page, console, admin):
    identity = Identity.from_row(admin)
    libraries = console.services.libraries
    library = console.run(libraries.create(identity, name="Handbook"))
    console.run(libraries.add_document(identity, library["id"], title="Fees",
                                       media_type="text/plain",
                                       content="A first consultation costs 80 pounds. " * 330))
    _open(page, "laptop")
    page.goto("/libraries")
    settled(page)
    page.get_by_role("button", name="Documents of Handbook").click()
    row = page.locator("#documents tr").filter(has_text="Fees")
    expect(row).to_contain_text("12.5 kB")  # 12,540 bytes
    expect(row).to_contain_text("A first consultation costs 80 pounds. A first")
    expect(row).to_contain_text("…")
    expect(row).to_contain_text("searchable, ")
    screenshot(page, "libraries-documents")
    for width in WIDTHS:  # a short word such as a media type is never broken inside
        page.set_viewport_size(WIDTHS[width])
        kind = row.locator("td").filter(has_text="text/plain")
        lines = kind.evaluate("""(cell) => {
            const range = document.createRange();
            range.selectNodeContents(cell);
            return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
        }""")
        assert lines == 1, f"text/plain is broken over {lines} lines at {width} width"
