"""Owner → Talk to a line, in a browser at a laptop's and a phone's width: the line's
account types a caller's turns and reads the agent's replies until it says goodbye."""

from __future__ import annotations

import pytest

from tests.browser.conftest import PASSWORD, open_screen, screenshot, sign_in
from tests.browser.harness import sideways_scroll
from tests.browser.playwright_expect import expect

OWNER = "reception@example.com"
ROOT = "root@example.com"
WIDTHS = {"laptop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module", autouse=True)
def line(console):
    from app.services.accounts import Identity

    services = console.services
    root = Identity.from_row(console.run(
        services.accounts.create(ROOT, PASSWORD, "superadmin", ())))
    owner = Identity.from_row(console.run(services.accounts.create(OWNER, PASSWORD, "user", ())))
    console.run(services.features.set_override(root, owner.account_id,
                                               "features.telephony", True))
    agent = console.run(services.agents.create(owner, {"name": "Desk", "model": "local",
                                                           "tools": ["book_appointment"]}))
    created = console.run(services.telephony.lines.create(root, {
        "e164": "+441632960123", "agent_id": agent["id"],
        "owner_user_id": str(owner.account_id), "label": "Front desk"}))
    console.run(services.telephony.lines.update(root, created["id"], {"enabled": True}))
    return created


@pytest.mark.parametrize("width", WIDTHS)
def test_the_lines_account_talks_to_it_until_goodbye(page, width):
    page.set_viewport_size(WIDTHS[width])
    sign_in(page, OWNER)
    if width == "phone":
        page.get_by_role("button", name="Menu").click()
    open_screen(page, "Talk to a line")
    expect(page.get_by_label("Line", exact=True)).to_contain_text("+441632960123 (Front desk)")
    log = page.get_by_role("list", name="The conversation")
    page.get_by_label("You say").fill("I'd like to book an appointment")
    page.get_by_role("button", name="Say it").click()
    expect(log).to_contain_text("What day and time would suit you?")
    page.get_by_label("You say").fill("Thank you, goodbye")
    page.get_by_role("button", name="Say it").click()
    expect(log).to_contain_text("Tools used:")
    expect(page.get_by_text("The line ended the conversation.")).to_be_visible()
    expect(page.get_by_label("You say")).to_be_hidden()
    assert sideways_scroll(page) == 0
    screenshot(page, f"talk-{width}")
    page.get_by_role("button", name="Start again").click()
    expect(page.get_by_label("You say")).to_be_visible()
    expect(log.locator("li")).to_have_count(0)
