"""The console in a browser, as the account a line answers for: the diary's weekly
hours with a break, a closure and an upcoming appointment in the diary's zone; the
screening list's paste box; an enquiry's status; and what an ordinary account without
the telephone feature is offered."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.browser.conftest import (
    PASSWORD,
    note_beside,
    open_as,
    open_screen,
    require_api,
    screenshot,
    settled,
    sign_in,
)
from tests.browser.harness import write_recording
from tests.browser.playwright_expect import expect

OWNER = "dentist@example.com"
OTHER = "visitor@example.com"
ROOT = "root@example.com"


@pytest.fixture(scope="module", autouse=True)
def accounts(console):
    from app.services.accounts import Identity

    services = console.services
    root = console.run(services.accounts.create(ROOT, PASSWORD, "superadmin", ()))
    owner = console.run(services.accounts.create(OWNER, PASSWORD, "user", ()))
    console.run(services.accounts.create(OTHER, PASSWORD, "user", ()))
    console.run(services.features.set_override(Identity.from_row(root), owner["id"],
                                               "features.telephony", True))
    return owner


def _api(page, console) -> httpx.Client:
    """An HTTP client holding the browser's session cookie."""
    return httpx.Client(base_url=console.base_url,
                        cookies={c["name"]: c["value"] for c in page.context.cookies()})


def test_owner_screens_are_offered_only_with_the_telephone_feature(page):
    sign_in(page, OTHER)
    nav = page.get_by_role("navigation", name="Screens")
    expect(nav.get_by_role("link", name="Agents")).to_be_visible()
    expect(nav.get_by_role("link", name="Diary")).to_have_count(0)
    assert page.goto("/owner/diary").status == 404
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, OWNER)
    for title in ("Diary", "Screening list", "Notification targets", "Enquiries", "Compliance"):
        expect(nav.get_by_role("link", name=title)).to_be_visible()
    expect(nav.get_by_role("link", name="Call log")).to_have_count(0)


def _booking_settings(page) -> None:
    """The diary's booking fields, as the owner of a practice in London sets them."""
    page.get_by_label("Time zone (IANA, e.g. Europe/London)").fill("Europe/London")
    page.get_by_label("Appointment length (minutes)").fill("30")
    page.get_by_label("Earliest booking ahead (minutes)").fill("0")
    page.get_by_label("Bookable ahead (days)").fill("14")


def _no_periods_on(page, day: str) -> None:
    remove = re.compile(f"^Remove {day} period")
    while page.get_by_role("button", name=remove).count():
        page.get_by_role("button", name=remove).first.click()


def test_the_weekly_hours_are_edited_with_a_break_and_kept(page, console):
    require_api(console, "GET", "/api/diary")
    open_as(page, OWNER, "Diary")
    _booking_settings(page)
    page.get_by_label("Lines offer times").check()
    for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"):
        _no_periods_on(page, day)
    page.get_by_role("button", name="Add a period on Monday").click()
    page.get_by_label("Monday period 1 opens").fill("09:00")
    page.get_by_label("Monday period 1 closes").fill("12:30")
    page.get_by_role("button", name="Add a period on Monday").click()
    page.get_by_label("Monday period 2 opens").fill("13:30")
    page.get_by_label("Monday period 2 closes").fill("17:00")
    for day in ("Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"):
        page.get_by_role("button", name=f"Add a period on {day}").click()
        page.get_by_label(f"{day} period 1 opens").fill("08:00")
        page.get_by_label(f"{day} period 1 closes").fill("00:00")  # until midnight
    page.get_by_role("button", name="Save hours").click()
    expect(page.get_by_role("status")).to_contain_text("The diary is saved")

    stored = _api(page, console).get("/api/diary").json()
    monday = [(p["opens_minute"], p["closes_minute"]) for p in stored["hours"] if p["weekday"] == 0]
    assert monday == [(540, 750), (810, 1020)]
    assert {p["closes_minute"] for p in stored["hours"] if p["weekday"] > 0} == {1440}

    page.get_by_label("Closed on").fill("2031-12-25")
    page.get_by_label("Note").fill("Christmas")
    page.get_by_role("button", name="Add closure").click()
    expect(page.locator("#closures")).to_contain_text("Christmas")

    client = _api(page, console)
    slot = client.get("/api/diary/slots", params={"limit": "1"}).json()["data"][0]
    booked = client.post("/api/diary/appointments", json={
        "starts_at": slot["starts_at"], "caller_name": "Ada Lovelace", "subject": "Check-up"})
    assert booked.status_code == 201, booked.text
    page.reload()
    settled(page)
    row = page.locator("#appointments").get_by_role("row", name=re.compile("Ada Lovelace"))
    expect(row).to_contain_text(booked.json()["reference"])
    expect(page.locator("#zone-note")).to_contain_text("Europe/London")
    expect(page.get_by_label("Monday period 2 opens")).to_have_value("13:30")
    screenshot(page, "diary")


def test_periods_added_after_a_removal_keep_ids_and_names_of_their_own(page, console):
    require_api(console, "GET", "/api/diary")
    open_as(page, OWNER, "Diary")
    _no_periods_on(page, "Wednesday")
    add = page.get_by_role("button", name="Add a period on Wednesday")
    add.click()  # a day's first period: office hours
    expect(page.get_by_label("Wednesday period 1 opens")).to_have_value("09:00")
    expect(page.get_by_label("Wednesday period 1 closes")).to_have_value("17:00")
    page.get_by_label("Wednesday period 1 closes").fill("12:00")
    add.click()  # a later one: after a break, once the one before has closed
    expect(page.get_by_label("Wednesday period 2 opens")).to_have_value("13:00")
    expect(page.get_by_label("Wednesday period 2 closes")).to_have_value("17:00")
    add.click()
    page.get_by_role("button", name="Remove Wednesday period 2").click()
    expect(add).to_be_focused()
    add.click()
    inputs = page.locator("#periods-2 input")
    labels = inputs.evaluate_all("inputs => inputs.map((i) => i.getAttribute('aria-label'))")
    assert labels == [f"Wednesday period {n} {end}" for n in (1, 2, 3) for end in ("opens", "closes")]
    ids = page.locator("#week [id]").evaluate_all("found => found.map((e) => e.id)")
    assert len(ids) == len(set(ids)), ids


def test_the_screening_paste_box_reports_added_and_skipped(page, console):
    require_api(console, "GET", "/api/conflict-names")
    open_as(page, OWNER, "Screening list")
    page.get_by_label("Names, one per line").fill("Dr Jane Smith\nSmith, Jane\nAcme Holdings Ltd")
    page.get_by_label("Note for every name of this paste (optional)").fill("former clients")
    page.get_by_role("button", name="Add names").click()
    expect(page.locator("#paste-result")).to_have_text(
        "Added 2, skipped 1 already on the list.")
    expect(page.locator("#names").get_by_role("row")).to_have_count(2)
    screenshot(page, "screening")


def test_an_empty_paste_and_a_plain_http_address_are_refused_beside_their_field(page):
    open_as(page, OWNER, "Screening list")
    names = page.get_by_label("Names, one per line")
    names.fill("  \n - \n")
    page.get_by_role("button", name="Add names").click()
    expect(note_beside(page, names)).to_have_text("Paste at least one name, one per line.")
    open_screen(page, "Notification targets")
    address = page.get_by_label("Address (https)")
    address.fill("http://hooks.example.com/services/T0/B0/x")
    page.get_by_role("button", name="Add target").click()
    expect(note_beside(page, address)).to_contain_text("https://")
    expect(page.locator("#targets")).not_to_contain_text("hooks.example.com")


def test_an_enquiry_changes_status_in_place(page, console, accounts):
    require_api(console, "GET", "/api/enquiries")
    from app import db

    async def take_message():
        async with db.connection() as connection:
            await connection.execute(
                "INSERT INTO enquiry (account_id, caller_number, caller_name, subject, message) "
                "VALUES ($1, '+447700900123', 'Grace Hopper', 'Invoice', 'Please call back.')",
                accounts["id"])

    console.run(take_message())
    open_as(page, OWNER, "Enquiries")
    status = page.get_by_label("Status of the message from Grace Hopper")
    expect(status).to_have_value("new")
    status.select_option("in_hand")
    expect(page.get_by_role("status")).to_contain_text("is now in hand")
    page.reload()
    settled(page)
    expect(page.get_by_label("Status of the message from Grace Hopper")).to_have_value("in_hand")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, ROOT)  # every line's messages, read only
    open_screen(page, "Messages")
    row = page.locator("#messages").get_by_role("row", name=re.compile("Grace Hopper"))
    expect(row).to_contain_text(OWNER)
    expect(row).to_contain_text("in hand")


@pytest.fixture
def webhook_receiver():
    """A webhook endpoint on loopback that records what is posted to it."""
    import http.server
    import threading

    received: list[bytes] = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the standard library's name
            received.append(self.rfile.read(int(self.headers["content-length"] or 0)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()


def test_a_notification_target_shows_only_its_host_and_its_test_result(page, console,
                                                                       webhook_receiver):
    require_api(console, "GET", "/api/notify-targets")
    from app.services.accounts import Identity

    url, received = webhook_receiver
    services = console.services
    root = console.run(services.accounts.authenticate(ROOT, PASSWORD, "127.0.0.1"))
    console.run(services.settings.change(Identity.from_row(root), "egress.allow_hosts",
                                         "localhost"))
    open_as(page, OWNER, "Notification targets")
    expect(page.get_by_label("Kind").locator("option")).to_have_text([  # what each works with
        "Slack-compatible incoming webhook", "Microsoft Teams-compatible incoming webhook",
        "webhook (JSON POST)"])
    page.get_by_label("Kind").select_option("webhook")
    page.get_by_label("Address (https)").fill(url)
    page.get_by_label("Label", exact=True).fill("Front office")
    page.get_by_label("appointment moved").uncheck()
    page.get_by_role("button", name="Add target").click()
    expect(page.get_by_role("status")).to_contain_text("is added")
    expect(page.locator("#secret-card")).to_be_visible()  # a webhook's signing secret, once
    row = page.locator("#targets").get_by_role("row", name=re.compile("Front office"))
    expect(row).to_contain_text("localhost")
    expect(row.locator("td").first).to_have_text("webhook (JSON POST)")
    expect(row).not_to_contain_text("/hook")
    expect(row).not_to_contain_text("appointment_moved")
    row.get_by_role("button", name="Test Front office").click()
    expect(page.get_by_role("status")).to_contain_text("Outward notifications are switched off")
    assert received == []
    console.run(services.settings.change(Identity.from_row(root), "notifications.enabled", True))
    row.get_by_role("button", name="Test Front office").click()
    expect(page.get_by_role("status")).to_contain_text("Test of Front office: delivered (204)")
    assert len(received) == 1
    expect(row).to_contain_text("delivered")
    screenshot(page, "notification-targets")


def test_the_compliance_view_says_what_callers_hear_and_what_is_kept(page, console, accounts):
    require_api(console, "GET", "/api/telephony/compliance")
    from app.services.accounts import Identity

    services = console.services
    root = Identity.from_row(console.run(services.accounts.authenticate(ROOT, PASSWORD,
                                                                        "127.0.0.1")))
    agent = console.run(services.agents.create(root, {"name": "Surgery", "model": "local"}))
    console.run(services.telephony.lines.create(root, {
        "e164": "+441632960111", "agent_id": agent["id"], "owner_user_id": str(accounts["id"]),
        "label": "Surgery", "record_calls": True, "recording_days": 90,
        "transcript_days": 365}))
    open_as(page, OWNER, "Compliance")
    card = page.locator("#compliance section").filter(has_text="+441632960111")
    expect(card).to_contain_text("This call is recorded.")
    expect(card).to_contain_text("every call, kept 90 days")
    expect(card).to_contain_text("365 days")
    expect(card).to_contain_text("kept until deleted by hand")  # the log: 0 days
    screenshot(page, "compliance")


def test_an_administrator_keeps_another_accounts_screening_list(page, console):
    require_api(console, "GET", "/api/conflict-names")
    open_as(page, ROOT, "Screening list")
    page.get_by_label("Account", exact=True).select_option(label=OWNER)
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r"account_id="))
    settled(page)
    expect(page.locator("#count")).to_contain_text("2 names")  # the owner's, pasted above
    page.get_by_label("Names, one per line").fill("Charles Babbage")
    page.get_by_role("button", name="Add names").click()
    expect(page.locator("#paste-result")).to_have_text("Added 1, skipped 0 already on the list.")
    page.get_by_role("button", name="Sign out").click()
    open_as(page, OWNER, "Screening list")
    expect(page.locator("#names")).to_contain_text("Charles Babbage")


def test_the_lines_account_listens_to_the_call_a_message_came_from(page, console, accounts):
    require_api(console, "GET", "/api/telephony/compliance")  # the line comes from that test
    import uuid

    from app import db

    call_id = uuid.uuid4()

    async def message_with_call():
        async with db.connection() as connection:
            line = await connection.fetchrow(
                "SELECT id, e164, agent_id FROM telephony_line WHERE owner_user_id = $1",
                accounts["id"])
            await connection.execute(
                "INSERT INTO telephony_call (id, number_id, e164, from_number, provider, "
                "owner_id, agent_id, outcome, ended_at) "
                "VALUES ($1, $2, $3, '+447700900555', 'carrier', $4, $5, 'completed', now())",
                call_id, line["id"], line["e164"], accounts["id"], line["agent_id"])
            await connection.execute(
                "INSERT INTO enquiry (account_id, call_id, caller_number, caller_name, subject, "
                "message) VALUES ($1, $2, '+447700900555', 'Alan Turing', 'Repeat prescription', "
                "'Needs it by Friday.')", accounts["id"], call_id)

    console.run(message_with_call())
    write_recording(console, call_id)
    open_as(page, OWNER, "Enquiries")
    row = page.locator("#enquiries").get_by_role("row", name=re.compile("Alan Turing"))
    row.get_by_role("link", name="The call").click()
    page.wait_for_url(f"**/calls/{call_id}")
    settled(page)
    expect(page.locator("#call")).to_contain_text("for telephony managers")
    page.get_by_role("button", name="Play the recording").click()
    expect(page.locator("#player")).to_have_js_property("readyState", 4)
    screenshot(page, "owner-listens")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, OTHER)  # anyone else: the page is not offered, the recording is 404
    assert page.goto(f"/calls/{call_id}").status == 404
    answer = _api(page, console).get(f"/api/telephony/calls/{call_id}/recording")
    assert answer.status_code == 404


def test_a_period_after_one_closing_late_or_unfinished_never_overlaps(page, console):
    require_api(console, "GET", "/api/diary")
    open_as(page, OWNER, "Diary")
    _booking_settings(page)
    _no_periods_on(page, "Thursday")
    add = page.get_by_role("button", name="Add a period on Thursday")
    add.click()
    page.get_by_label("Thursday period 1 opens").fill("18:00")
    page.get_by_label("Thursday period 1 closes").fill("00:00")  # until midnight
    add.click()  # nothing fits after midnight: office hours, which are free
    expect(page.get_by_label("Thursday period 2 opens")).to_have_value("09:00")
    expect(page.get_by_label("Thursday period 2 closes")).to_have_value("17:00")
    add.click()  # office hours are taken now: left for the owner to fill in
    expect(page.get_by_label("Thursday period 3 opens")).to_have_value("")
    expect(page.get_by_label("Thursday period 3 closes")).to_have_value("")
    page.get_by_role("button", name="Remove Thursday period 3").click()
    page.get_by_role("button", name="Remove Thursday period 2").click()
    page.get_by_label("Thursday period 1 closes").fill("")  # a closing time not given
    add.click()
    expect(page.get_by_label("Thursday period 2 opens")).to_have_value("09:00")
    expect(page.get_by_label("Thursday period 2 closes")).to_have_value("17:00")
    page.get_by_label("Thursday period 1 closes").fill("23:30")
    page.get_by_role("button", name="Save hours").click()
    expect(page.get_by_role("status")).to_contain_text("The diary is saved")
    stored = _api(page, console).get("/api/diary").json()
    thursday = sorted((p["opens_minute"], p["closes_minute"])
                      for p in stored["hours"] if p["weekday"] == 3)
    assert thursday == [(540, 1020), (1080, 1410)]
