"""Sharing through a project on the Agents and Libraries screens: the owner puts an
agent and Libraries into a project from the console and takes one out again; a member
of the project sees them listed under the project's name, and editing them is offered
without the project choice, which is the owner's. At a laptop's and a phone's width,
with nothing scrolling sideways and no serious accessibility problem.

The tests run in order: the member's view is of what the owner's test made."""

from __future__ import annotations

import json

import pytest

from app.services.accounts import Identity
from tests.browser.conftest import PASSWORD, fresh_tab, note_beside, screenshot, settled, sign_in
from tests.browser.harness import accessibility_violations, sideways_scroll
from tests.browser.playwright_expect import expect

OWNER = "ann@example.org"
MEMBER = "bob@example.org"
PROJECT = "Surgery"
WIDTHS = {"laptop": {"width": 1366, "height": 800}, "phone": {"width": 390, "height": 844}}
NOT_OWNER = {"code": "not_owner", "field": "project_id",
             "message": "Only the agent's owner or an administrator moves it between projects."}


@pytest.fixture(scope="module", autouse=True)  # the server before the browser's loop
def project(console):
    """Ann's project, which Bob has joined by accepting her invitation."""
    services = console.services
    ann = Identity.from_row(console.run(services.accounts.create(OWNER, PASSWORD, "user", ())))
    bob = Identity.from_row(console.run(services.accounts.create(MEMBER, PASSWORD, "user", ())))
    made = console.run(services.projects.create(ann, PROJECT))
    console.run(services.projects.invite(ann, made["id"], MEMBER))
    [invitation] = console.run(services.projects.invitations(bob))
    console.run(services.projects.accept(bob, invitation["id"]))
    return made


@pytest.fixture
def page(console, browser, width):  # the server first: it starts outside the browser's loop
    """A fresh tab at the test's width, whose page policy lets axe-core in (an inline
    script, which the console's own policy forbids)."""
    with fresh_tab(browser, console, bypass_csp=True, viewport=WIDTHS[width]) as tab:
        yield tab


def _screen(page, path: str) -> None:
    page.goto(path)
    settled(page)


def _project_cell(page, table: str, name: str):
    return page.locator(f"#{table} tr", has_text=name).locator('td[data-label="Project"]')


def _fits(page, name: str) -> None:
    assert sideways_scroll(page) <= 0
    assert accessibility_violations(page) == []
    screenshot(page, name)


def _patch_sent(page, save) -> dict:
    """The body of the PATCH that clicking ``save`` sends."""
    with page.expect_request(lambda request: request.method == "PATCH") as sent:
        save.click()
    return json.loads(sent.value.post_data)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_owner_shares_an_agent_and_libraries_and_takes_one_out(page, project, width):
    sign_in(page, OWNER)
    _screen(page, "/libraries")
    choice = page.get_by_label("Project")
    expect(choice.locator("option")).to_have_text(["None (only you)", PROJECT])
    for name in (f"Handbook {width}", f"Drafts {width}"):
        page.get_by_label("Name", exact=True).fill(name)
        choice.select_option(label=PROJECT)
        page.get_by_role("button", name="Create Library").click()
        expect(page.get_by_role("status")).to_have_text(
            f"{name} is created; upload its documents below.")
        expect(_project_cell(page, "libraries", name)).to_have_text(PROJECT)

    page.get_by_role("button", name=f"Edit Drafts {width}").click()
    expect(choice).to_have_value(project["id"])
    choice.select_option(label="None (only you)")
    sent = _patch_sent(page, page.get_by_role("button", name="Save Library"))
    assert sent == {"project_id": None}  # only what changed
    expect(page.get_by_role("status")).to_have_text(f"Drafts {width} is saved.")
    expect(_project_cell(page, "libraries", f"Drafts {width}")).to_have_text("none")
    # The keyboard is back on the row it edited, not on a form creating again.
    expect(page.get_by_role("button", name=f"Edit Drafts {width}")).to_be_focused()
    _fits(page, f"sharing-owner-libraries-{width}")

    _screen(page, "/agents")
    page.get_by_label("Name", exact=True).fill(f"Desk {width}")
    page.get_by_label("Model", exact=True).select_option("local")
    page.get_by_label("Project").select_option(label=PROJECT)
    page.get_by_role("checkbox", name=f"Handbook {width}").check()
    page.get_by_role("button", name="Create agent").click()
    expect(page.get_by_role("status")).to_have_text(f"Desk {width} is saved.")
    expect(_project_cell(page, "agents", f"Desk {width}")).to_have_text(PROJECT)

    # A refusal of the move is shown beside the choice, as other refusals are.
    page.get_by_role("button", name=f"Edit Desk {width}").click()
    page.route("**/api/agents/*", lambda route: route.fulfill(
        status=403, body=json.dumps({"error": NOT_OWNER}),
        headers={"content-type": "application/json"}))
    page.get_by_label("Project").select_option(label="None (only you)")
    page.get_by_role("button", name="Save agent").click()
    expect(note_beside(page, page.get_by_label("Project"))).to_have_text(NOT_OWNER["message"])
    page.unroute("**/api/agents/*")
    page.get_by_role("button", name="Cancel editing").click()
    expect(page.get_by_role("button", name=f"Edit Desk {width}")).to_be_focused()
    _fits(page, f"sharing-owner-agents-{width}")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_member_sees_what_the_project_holds_and_cannot_move_it(page, project, width):
    sign_in(page, MEMBER)
    _screen(page, "/agents")
    expect(_project_cell(page, "agents", f"Desk {width}")).to_have_text(PROJECT)
    page.get_by_role("button", name=f"Edit Desk {width}").click()
    choice = page.get_by_label("Project")
    expect(choice).to_be_disabled()
    expect(choice).to_have_value(project["id"])
    expect(choice).to_have_accessible_description(
        "Only its owner or an administrator moves it into or out of a project.")
    # A member still edits it: the change goes without the project.
    page.get_by_label("Instructions").fill("Answer briefly.")
    sent = _patch_sent(page, page.get_by_role("button", name="Save agent"))
    assert "project_id" not in sent
    expect(page.get_by_role("status")).to_have_text(f"Desk {width} is saved.")
    expect(page.get_by_role("button", name=f"Edit Desk {width}")).to_be_focused()
    # Their own new agent may go into the project.
    expect(choice).to_be_enabled()
    _fits(page, f"sharing-member-agents-{width}")

    _screen(page, "/libraries")
    expect(_project_cell(page, "libraries", f"Handbook {width}")).to_have_text(PROJECT)
    expect(page.locator("#libraries tr", has_text=f"Drafts {width}")).to_have_count(0)
    page.get_by_role("button", name=f"Edit Handbook {width}").click()
    expect(page.get_by_label("Project")).to_be_disabled()
    expect(page.locator("#lib-project-hint")).to_be_visible()
    _fits(page, f"sharing-member-libraries-{width}")
