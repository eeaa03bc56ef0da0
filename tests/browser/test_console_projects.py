"""The Projects screen in a browser, as an owner and the colleagues they invite: a
project created and a colleague's email invited; the colleague, signed in elsewhere,
accepts and sees the project as a plain member, with no button to manage it; the owner
removes them; another member reads who owns a project and leaves it. An invitation
declined by its invitee, another withdrawn by the owner, a
refused email shown beside its field, a project renamed and deleted. A removal leaves
the keyboard on its list's heading; at a phone's and a laptop's width nothing scrolls
sideways and axe-core finds no serious or critical problem.
"""

from __future__ import annotations

import re

import pytest

from app.routes.projects import MEMBER_INVITED
from app.services.accounts import Identity
from tests.browser.conftest import (
    PASSWORD,
    fresh_tab,
    note_beside,
    open_screen,
    removed_from_the_keyboard,
    screenshot,
    settled,
    sign_in,
)
from tests.browser.harness import accessibility_violations, sideways_scroll
from tests.browser.playwright_expect import expect

OWNER = "practice-manager@example.com"
COLLEAGUE = "colleague@example.com"
PASSERBY = "passerby@example.com"
NOBODY = "nobody-has-this-yet@example.com"  # an email no account has
WIDTHS = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1366, "height": 768}}
# A name as long as people write them, to show it wraps rather than widening the page.
LONG_NAME = "Northern Regional Dental Practice: reception, weekday mornings and Saturday cover"


@pytest.fixture(scope="module", autouse=True)
def accounts(console):
    """The owner, the colleague they invite, and a passer-by who declines."""
    create = console.services.accounts.create
    return {email: Identity.from_row(console.run(create(email, PASSWORD, "user", ())))
            for email in (OWNER, COLLEAGUE, PASSERBY)}


def tab_of(browser, console, width: str):
    """A tab of its own (its own cookies, so one person each) at ``width``, whose page
    policy lets axe-core in: it is added as an inline script, which the console forbids."""
    return fresh_tab(browser, console, bypass_csp=True, viewport=WIDTHS[width])


def open_projects(page, email: str) -> None:
    sign_in(page, email)
    page.goto("/projects")
    settled(page)


def fits_and_reads_well(page, name: str) -> None:
    assert sideways_scroll(page) <= 0, f"{name} scrolls sideways"
    assert accessibility_violations(page) == []
    screenshot(page, name)


def no_button(page, pattern: str) -> None:
    expect(page.get_by_role("button", name=re.compile(pattern))).to_have_count(0)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_colleague_invited_accepts_sees_no_manage_buttons_and_is_removed(browser, console,
                                                                           width):
    name = f"{LONG_NAME} ({width})"
    with tab_of(browser, console, width) as owner, tab_of(browser, console, width) as colleague:
        sign_in(owner, OWNER)
        if width == "laptop":
            open_screen(owner, "Projects")  # offered in the navigation, under Setup
        else:
            owner.goto("/projects")
            settled(owner)
        owner.get_by_label("Name", exact=True).fill(name)
        owner.get_by_role("button", name="Create project").click()
        expect(owner.get_by_role("status")).to_have_text(
            f"{name} is created; invite its members below.")
        expect(owner.get_by_role("heading", level=2, name=f"Members of {name}")).to_be_visible()
        expect(owner.locator("#members")).to_contain_text("No members yet.")
        expect(owner.get_by_label("Email to invite")).to_be_focused()
        owner.get_by_label("Email to invite").fill(COLLEAGUE)
        owner.get_by_role("button", name="Invite", exact=True).click()
        expect(owner.get_by_role("status")).to_have_text(MEMBER_INVITED["message"])
        expect(owner.locator("#invited")).to_contain_text(COLLEAGUE)
        fits_and_reads_well(owner, f"projects-owner-{width}")

        open_projects(colleague, COLLEAGUE)
        invitation = colleague.locator("#invitations tr", has_text=name)
        expect(invitation).to_contain_text(OWNER)  # who invited them
        colleague.get_by_role("button", name=f"Accept the invitation to {name}").click()
        expect(colleague.get_by_role("status")).to_have_text(f"You are a member of {name}.")
        expect(colleague.locator("#invitations")).to_contain_text("No invitations for you.")
        expect(colleague.locator("#projects tr", has_text=name)).to_contain_text("member")
        no_button(colleague, "^(Rename|Delete) ")
        colleague.get_by_role("button", name=f"Members of {name}").click()
        members = colleague.get_by_role("heading", level=2, name=f"Members of {name}")
        expect(members).to_be_focused()
        expect(colleague.locator("#members")).to_contain_text(COLLEAGUE)
        expect(colleague.locator("#members-note")).to_contain_text(
            "Only its owner or an administrator renames or deletes it, invites or removes members.")
        no_button(colleague, "^(Remove|Withdraw) ")
        expect(colleague.get_by_label("Email to invite")).to_be_hidden()
        fits_and_reads_well(colleague, f"projects-member-{width}")

        owner.reload()
        settled(owner)
        owner.get_by_role("button", name=f"Members of {name}").click()
        removed_from_the_keyboard(owner, owner.get_by_role(
            "button", name=f"Remove {COLLEAGUE} from {name}"),
            f"{COLLEAGUE} is removed from {name}.", f"Members of {name}")

        colleague.reload()
        settled(colleague)
        expect(colleague.locator("#projects")).not_to_contain_text(name)


def test_an_invitation_declined_by_its_invitee_and_one_withdrawn_by_the_owner(browser, console,
                                                                             accounts):
    projects = console.services.projects
    project = console.run(projects.create(accounts[OWNER], "Front desk rota"))
    for email in (PASSERBY, NOBODY):
        console.run(projects.invite(accounts[OWNER], project["id"], email))

    with tab_of(browser, console, "laptop") as passerby:
        open_projects(passerby, PASSERBY)
        removed_from_the_keyboard(passerby, passerby.get_by_role(
            "button", name="Decline the invitation to Front desk rota"),
            "The invitation to Front desk rota is declined.", "Invitations for you")
        expect(passerby.locator("#projects")).not_to_contain_text("Front desk rota")
    assert console.run(projects.invitations(accounts[PASSERBY])) == []

    with tab_of(browser, console, "laptop") as owner:
        open_projects(owner, OWNER)
        owner.get_by_role("button", name="Members of Front desk rota").click()
        invited = owner.locator("#invited")
        expect(invited).to_contain_text(NOBODY)
        expect(invited).not_to_contain_text(PASSERBY)
        removed_from_the_keyboard(owner, owner.get_by_role(
            "button", name=f"Withdraw the invitation of {NOBODY}"),
            f"The invitation of {NOBODY} is withdrawn.", "Invited to Front desk rota")
        expect(invited).to_contain_text("Nobody is invited.")
    assert console.run(projects.get(accounts[OWNER], project["id"]))["invitations"] == []


def test_a_member_sees_the_owner_and_leaves(browser, console, accounts):
    projects = console.services.projects
    project = console.run(projects.create(accounts[OWNER], "Lunch cover"))
    console.run(projects.invite(accounts[OWNER], project["id"], COLLEAGUE))
    [invitation] = [i for i in console.run(projects.invitations(accounts[COLLEAGUE]))
                    if i["project_id"] == project["id"]]
    console.run(projects.accept(accounts[COLLEAGUE], invitation["id"]))

    with tab_of(browser, console, "phone") as colleague:
        open_projects(colleague, COLLEAGUE)
        colleague.get_by_role("button", name="Members of Lunch cover").click()
        expect(colleague.locator("#members-note")).to_contain_text(f"Its owner is {OWNER}.")
        removed_from_the_keyboard(colleague, colleague.get_by_role(
            "button", name="Leave Lunch cover"), "You have left Lunch cover.", "Your projects")
        expect(colleague.locator("#projects")).not_to_contain_text("Lunch cover")
    assert project["id"] not in {p["id"] for p in console.run(projects.list(accounts[COLLEAGUE]))}


def test_refusals_beside_their_field_and_a_project_renamed_then_deleted(browser, console):
    with tab_of(browser, console, "laptop") as owner:
        open_projects(owner, OWNER)
        owner.get_by_label("Name", exact=True).fill("Spare room")
        owner.get_by_role("button", name="Create project").click()
        expect(owner.get_by_role("status")).to_contain_text("Spare room is created")
        email = owner.get_by_label("Email to invite")
        email.fill(f"{'a' * 320}@example.com")  # a form the browser takes, too long to keep
        owner.get_by_role("button", name="Invite", exact=True).click()
        expect(note_beside(owner, email)).to_have_text("Give a valid email address.")

        owner.get_by_role("button", name="Rename Spare room").click()
        expect(owner.get_by_role("heading", level=2, name="Edit Spare room")).to_be_visible()
        field = owner.get_by_label("Name", exact=True)
        expect(field).to_be_focused()
        field.fill("   ")
        owner.get_by_role("button", name="Save name").click()
        expect(note_beside(owner, field)).to_have_text("A project name has 1 to 200 characters.")
        field.fill("Quiet room")
        owner.get_by_role("button", name="Save name").click()
        expect(owner.get_by_role("status")).to_have_text("Spare room is renamed Quiet room.")
        expect(owner.get_by_role("button", name="Rename Quiet room")).to_be_focused()
        expect(owner.get_by_role("heading", level=2, name="Members of Quiet room")).to_be_visible()

        removed_from_the_keyboard(owner, owner.get_by_role("button", name="Delete Quiet room"),
                                  "Quiet room is deleted.", "Your projects")
        expect(owner.get_by_role("heading", level=2, name="Members of Quiet room")).to_be_hidden()
