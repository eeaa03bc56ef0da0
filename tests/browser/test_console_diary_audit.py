"""The console in a browser: booking a free slot from the Appointments screen (and a
taken one refused next to the form), moving and cancelling it; and the audit trail
read as sentences, filtered by actor, action and time, a page at a time. Each at a
desktop and a telephone's width, neither of which may scroll sideways."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest

from tests.browser.conftest import note_beside, open_screen, screenshot, settled, sign_in
from tests.browser.playwright_expect import expect

ROOT = "root@example.com"
OWNER = "dentist@example.com"
ANN = "ann@example.org"
VIEWPORTS = [pytest.param({"width": 1280, "height": 800}, id="desktop"),
             pytest.param({"width": 390, "height": 844}, id="phone")]
# Open round the clock, so a free slot is there whenever the test runs.
ALWAYS_OPEN = {"timezone": "Europe/London", "slot_minutes": 30, "lead_minutes": 0,
               "horizon_days": 7, "enabled": True,
               "hours": [{"weekday": d, "opens_minute": 0, "closes_minute": 1440}
                         for d in range(7)]}


@pytest.fixture(scope="module", autouse=True)
def accounts(console):
    from app.errors import Unauthorized
    from app.services.audit import MANY_SOURCES
    from app.services.accounts import Identity

    services = console.services
    root = console.run(services.accounts.create(ROOT, "correct horse battery staple",
                                                "superadmin", ()))
    owner = console.run(services.accounts.create(OWNER, "correct horse battery staple"))
    ann = console.run(services.accounts.create(ANN, "correct horse battery staple"))
    console.run(services.features.set_override(Identity.from_row(root), owner["id"],
                                               "features.telephony", True))
    console.run(services.diary.diaries.put(owner["id"], ALWAYS_OPEN, actor=owner["id"]))
    for _ in range(3):
        console.run(services.audit.tally("telephony.signature.rejected", "203.0.113.9",
                                         data={"address": "203.0.113.9"}))
    for email in (ANN, ANN, "nobody@example.org"):
        with pytest.raises(Unauthorized):
            console.run(services.accounts.authenticate(email, "a wrong guess", "198.51.100.7"))
    # Sources past the trail's bound for a window are counted in one entry.
    console.run(services.audit.record("account.sign_in_failed", data=MANY_SOURCES))
    console.run(services.audit.record("agent.archived", actor=ann["id"],
                                      subject=str(uuid.uuid4()), data={"name": "Desk"}))
    for n in range(60):
        console.run(services.audit.record("library.created", actor=root["id"],
                                          data={"name": f"Shelf {n}"}))


# The widest things that stick out past the right edge, to name in a failure.
_OVERFLOWING = """[document.documentElement.scrollWidth, window.innerWidth,
  ...[...document.querySelectorAll('body *')]
  .filter((node) => node.getBoundingClientRect().right + scrollX > window.innerWidth + 0.5)
  .slice(-5).map((node) => `${node.tagName.toLowerCase()}#${node.id}.${node.className}`)]"""


def no_sideways_scroll(page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), \
        page.evaluate(_OVERFLOWING)


def _api(page, console) -> httpx.Client:
    return httpx.Client(base_url=console.base_url,
                        cookies={c["name"]: c["value"] for c in page.context.cookies()})


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_free_slot_is_booked_moved_and_cancelled_and_a_taken_one_refused(page, console,
                                                                           viewport):
    page.set_viewport_size(viewport)
    sign_in(page, OWNER)
    if viewport["width"] < 600:
        page.goto("/owner/appointments")
        settled(page)
    else:
        open_screen(page, "Appointments")
    expect(page.locator("#zone-note")).to_contain_text("Europe/London")
    name = f"Ada {viewport['width']}"
    page.get_by_label("Caller's name").fill(name)
    page.get_by_label("Phone number").fill("+44 20 7946 0000")
    page.get_by_label("Subject").fill("Check-up")
    page.get_by_role("button", name="Book", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text(f"Booked: {name}")
    booked = page.locator(".appointment", has_text=name)
    expect(booked).to_contain_text("Check-up")
    no_sideways_scroll(page)
    screenshot(page, f"appointments-{viewport['width']}")

    # Someone else takes the time on offer while the form is open: refused beside it.
    offered = page.get_by_label("Time", exact=True).input_value()
    taken = _api(page, console).post("/api/diary/appointments", json={
        "starts_at": offered, "caller_name": "Quick Caller", "subject": "Same time"})
    assert taken.status_code == 201, taken.text
    page.get_by_label("Caller's name").fill("Late Caller")
    page.get_by_label("Subject").fill("Too late")
    page.get_by_role("button", name="Book", exact=True).click()
    expect(note_beside(page, page.get_by_label("Time", exact=True))).to_contain_text(
        "That time has gone")
    no_sideways_scroll(page)

    page.get_by_role("button", name=re.compile(f"^Move the appointment with {name}")).click()
    dialog = page.get_by_role("dialog")
    target = dialog.get_by_label("New time").locator("option").nth(1).get_attribute("value")
    dialog.get_by_label("New time").select_option(target)
    dialog.get_by_role("button", name="Move", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text(f"Moved: {name}")
    listed = _api(page, console).get("/api/diary/appointments").json()["data"]
    assert [a["starts_at"] for a in listed if a["caller_name"] == name] == [target]

    page.get_by_role("button", name="Day", exact=True).click()
    expect(page.get_by_role("button", name="Day", exact=True)).to_have_attribute(
        "aria-pressed", "true")
    page.get_by_role("button", name=re.compile(f"^Cancel the appointment with {name}")).click()
    page.locator("#confirm-ok").click()
    expect(page.get_by_role("status")).to_contain_text(f"with {name} is cancelled")
    expect(page.locator(".appointment", has_text=name)).to_have_count(0)
    no_sideways_scroll(page)


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_audit_trail_reads_as_sentences_and_filters(page, viewport):
    page.set_viewport_size(viewport)
    sign_in(page, ROOT)
    page.goto("/audit")
    settled(page)
    entries = page.locator("#entries")
    expect(entries.locator(".audit-entry")).to_have_count(50)
    page.get_by_role("button", name="Older").click()
    expect(page.get_by_role("button", name="Newer")).to_be_enabled()
    expect(entries).to_contain_text(f"{ROOT} created the Library Shelf 0")
    expect(entries).to_contain_text("3 failed carrier signatures from 203.0.113.9")
    expect(entries).to_contain_text(f"2 failed sign-ins as {ANN} from 198.51.100.7")
    expect(entries).to_contain_text("1 failed sign-in as an unknown email from 198.51.100.7")
    expect(entries).to_contain_text("1 failed sign-in from many addresses")
    no_sideways_scroll(page)

    page.get_by_label("Actor").select_option(label=ANN)
    page.get_by_role("button", name="Show").click()
    sentence = f"{ANN} archived the agent Desk"
    expect(entries.locator(".audit-entry")).to_have_count(1)
    expect(entries).to_contain_text(sentence)
    entries.locator("summary").click()
    expect(entries.locator("details dd", has_text="agent.archived")).to_be_visible()
    screenshot(page, f"audit-{viewport['width']}")

    page.get_by_label("Actor").select_option(label="Anyone")
    page.get_by_label("Action").fill("telephony.signature.rejected")
    page.get_by_role("button", name="Show").click()
    expect(entries.locator(".audit-entry")).to_have_count(1)
    page.get_by_label("Until").fill("2020-01-01T00:00")
    page.get_by_role("button", name="Show").click()
    expect(entries).to_contain_text("No entries match.")
    page.get_by_label("From").fill("2021-01-01T00:00")
    page.get_by_role("button", name="Show").click()
    expect(note_beside(page, page.get_by_label("Until"))).to_have_text(
        "The end must be later than the start.")
    no_sideways_scroll(page)


def test_with_times_not_offered_the_booking_form_says_why_and_where_to_change_it(page, console):
    from app.services.accounts import Identity

    services = console.services
    root = console.run(services.accounts.authenticate(ROOT, "correct horse battery staple",
                                                      "127.0.0.1"))
    closed = console.run(services.accounts.create("closed@example.com",
                                                  "correct horse battery staple"))
    console.run(services.features.set_override(Identity.from_row(root), closed["id"],
                                               "features.telephony", True))
    console.run(services.diary.diaries.put(closed["id"], {**ALWAYS_OPEN, "enabled": False},
                                           actor=closed["id"]))
    sign_in(page, "closed@example.com")
    open_screen(page, "Appointments")
    time = page.get_by_label("Time", exact=True)
    expect(time.locator("option")).to_have_text(["No free times"])
    why = page.locator("#b-slot-note")
    expect(why).to_have_text("No free times are offered while “Lines offer times” is off. "
                             "Tick it in the diary settings.")
    expect(time).to_have_attribute("aria-describedby", "b-slot-note")
    why.get_by_role("link", name="the diary settings").click()
    page.get_by_role("heading", level=1, name="Diary").wait_for()
    settled(page)
    page.get_by_label("Lines offer times").check()
    page.get_by_role("button", name="Save hours").click()
    expect(page.get_by_role("status")).to_contain_text("The diary is saved")
    page.go_back()
    settled(page)
    expect(page.locator("#b-slot-note")).to_have_text("")
    assert page.get_by_label("Time", exact=True).locator("option").count() > 1
