"""The Usage, Call log, call and Telephone screens in a browser, at a phone's width and
a desktop's: usage charted on time axes with ticks for a chosen range and totalled per
line; the call log filtered by days and caller; a call with its line, agent, opening
and turn timings; the telephone system's addresses and dialplan to copy. Every screen
is checked with axe-core and must not scroll sideways."""

from __future__ import annotations

import datetime as dt
import re
import uuid

import pytest

from tests.browser.conftest import PASSWORD, screenshot, settled, sign_in
from tests.browser.harness import accessibility_violations, sideways_scroll
from tests.browser.playwright_expect import expect

ROOT = "root@example.com"
OWNER = "reception@example.com"
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
LINE = "+442079460000"
LISTEN = "127.0.0.1:9092"
PUBLIC = "https://calls.example.org"
OPENING = "Hello, you have reached the practice."
#: the call with a transcript and timed turns, and another caller's, days earlier
TIMED_CALLER, OTHER_CALLER = "+447700900111", "+447700900222"


async def _deployment(console) -> dict:
    """An agent, a labelled line with two calls (one timed, with its transcript) and
    usage on the line and in the app; the telephone's addresses set."""
    from app import db
    from app.services.accounts import Identity
    from app.services.usage import UsageRecord
    from app.tables import Chat, ChatMessage
    from tests.support.settings import set_runtime

    services = console.services
    await services.accounts.create(ROOT, PASSWORD, "superadmin", ())
    owner = await services.accounts.create(OWNER, PASSWORD, "user", ())
    agent = await services.agents.create(Identity.from_row(owner),
                                         {"name": "Reception", "model": "local"})
    await set_runtime(services, "telephony.public_base_url", PUBLIC)
    await set_runtime(services, "telephony.pbx_listen", LISTEN)
    chat = Chat(owner_id=owner["id"], agent_id=agent["id"], source="telephone",
                title=f"Call from {TIMED_CALLER}")
    await chat.save()
    await ChatMessage.insert(
        ChatMessage(chat_id=chat.id, role="assistant", content=OPENING),
        ChatMessage(chat_id=chat.id, role="user", content="When do you open?"),
        ChatMessage(chat_id=chat.id, role="assistant", content="We open at nine."))
    now = dt.datetime.now(dt.UTC)
    async with db.connection() as connection:
        line = await connection.fetchval(
            "INSERT INTO telephony_line (e164, label, agent_id, owner_user_id) "
            "VALUES ($1, 'Front desk', $2, $3) RETURNING id", LINE, agent["id"], owner["id"])
        calls = {}
        for caller, started, chat_id in ((TIMED_CALLER, now - dt.timedelta(hours=1), chat.id),
                                         (OTHER_CALLER, now - dt.timedelta(days=3), None)):
            calls[caller] = await connection.fetchval(
                "INSERT INTO telephony_call (id, number_id, e164, from_number, provider, "
                "owner_id, agent_id, chat_id, outcome, started_at, ended_at) VALUES "
                "($1, $2, $3, $4, 'carrier', $5, $6, $7, 'completed', $8::timestamptz, $8::timestamptz + interval '1 min') "
                "RETURNING id", uuid.uuid4(), line, LINE, caller, owner["id"], agent["id"],
                chat_id, started)
        await connection.execute(
            "INSERT INTO telephony_turn (call_id, asked_ms, first_text_ms, first_audio_ms, "
            "finished_ms) VALUES ($1, 820, 1180, 1640, 4300)", calls[TIMED_CALLER])
    for line_id, source in ((line, "telephone"), (line, "telephone"), (None, "app")):
        services.usage.record(UsageRecord(owner["id"], "local", "local", source, "ok", 30, 10,
                                          1500, line_id=line_id))
    await services.usage.drain()
    return {"calls": {caller: str(call) for caller, call in calls.items()}}


@pytest.fixture(scope="module", autouse=True)  # the server before the browser's loop
def deployment(console):
    return console.run(_deployment(console))


@pytest.fixture
def signed_in(browser, console, deployment):
    """The superadmin's page. Its own policy allows no inline script, which is how
    axe-core is put in: the test lifts it."""
    context = browser.new_context(base_url=console.base_url, bypass_csp=True,
                                  viewport=SIZES["desktop"])
    context.set_default_timeout(15_000)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, ROOT)
    try:
        yield page
    finally:
        context.close()
    assert errors == [], f"scripts failed in the page: {errors}"


def _checked(page, name: str) -> None:
    """Kept for a person to look at, and clean: nothing sideways, nothing serious."""
    screenshot(page, name)
    assert sideways_scroll(page) <= 0, f"{name} scrolls sideways"
    assert accessibility_violations(page) == []


def _chart_labels(page) -> list[dict]:
    """Every label of the usage charts as drawn on the screen: its text, its box and
    the chart it belongs to."""
    return page.evaluate("""() => [...document.querySelectorAll('.chart svg')].flatMap(
        (picture, chart) => [...picture.querySelectorAll('text')].map((label) => {
            const box = label.getBoundingClientRect();
            return { chart, text: label.textContent, left: box.left, right: box.right,
                     top: box.top, bottom: box.bottom, height: box.height };
        }))""")


def _readable_charts(page, size: str) -> None:
    """Each chart's numbers and dates are at least 11 px tall on the screen, and none
    is drawn over another."""
    labels = _chart_labels(page)
    assert labels, "the charts have no labels"
    small = [(label["text"], round(label["height"], 1)) for label in labels if label["height"] < 11]
    assert small == [], f"labels too small to read at {size} width: {small}"
    overlapping = [
        (one["text"], other["text"])
        for index, one in enumerate(labels) for other in labels[index + 1:]
        if one["chart"] == other["chart"]
        and one["left"] < other["right"] and other["left"] < one["right"]
        and one["top"] < other["bottom"] and other["top"] < one["bottom"]]
    assert overlapping == [], f"labels drawn over each other at {size} width: {overlapping}"


def _visit(page, path: str, size: str) -> None:
    page.set_viewport_size(SIZES[size])
    page.goto(path)
    settled(page)


@pytest.mark.parametrize("size", SIZES)
def test_usage_is_charted_on_time_axes_for_a_range_and_totalled_per_line(signed_in, size):
    page = signed_in
    _visit(page, "/admin/usage", size)
    chart = page.locator("#chart-requests svg")
    today = dt.datetime.now(dt.UTC).date()
    # A tick and its date on the time axis, ticks on the value axis too (0, half, peak).
    expect(chart.locator("line.tick")).not_to_have_count(0)
    expect(chart.locator("text").filter(has_text=today.isoformat()[5:])).to_have_count(1)
    expect(chart.locator("text").filter(has_text=re.compile(r"^3$"))).to_have_count(1)
    line_row = page.locator("#by-line").get_by_role("row", name=re.compile("Front desk"))
    expect(line_row).to_contain_text(LINE)
    expect(line_row).to_contain_text("2")
    expect(line_row).to_contain_text("1500")
    expect(page.locator("#by-line")).to_contain_text("(no line: the app and the API)")
    _readable_charts(page, size)
    _checked(page, f"usage-axes-{size}")
    # Turned to the other width, the charts are drawn again across it, still readable.
    other = "phone" if size == "desktop" else "desktop"
    page.set_viewport_size(SIZES[other])
    page.wait_for_function("""() => [...document.querySelectorAll('.chart svg')].every(
        (picture) => Math.abs(picture.getBoundingClientRect().width
                              - picture.parentElement.clientWidth) < 1)""")
    _readable_charts(page, other)
    assert sideways_scroll(page) <= 0, f"the usage screen scrolls sideways at {other} width"
    page.set_viewport_size(SIZES[size])
    # The range picked is the range the API answers for.
    page.get_by_label("From", exact=True).fill((today - dt.timedelta(days=10)).isoformat())
    page.get_by_label("To (inclusive)", exact=True).fill((today - dt.timedelta(days=1)).isoformat())
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#by-line")).to_have_text("No usage in this range.")
    expect(chart.locator("text").filter(has_text=today.isoformat()[5:])).to_have_count(0)


@pytest.mark.parametrize("size", SIZES)
def test_the_call_log_filters_by_days_and_caller_and_a_call_shows_its_turns(
        signed_in, deployment, size):
    page = signed_in
    _visit(page, "/admin/telephone/calls", size)
    calls = page.locator("#calls")
    expect(calls.get_by_role("row")).to_have_count(2)
    expect(calls).to_contain_text("Front desk")
    expect(calls).to_contain_text("Reception")
    today = dt.datetime.now(dt.UTC).date()
    page.get_by_label("Started from", exact=True).fill((today - dt.timedelta(days=5)).isoformat())
    page.get_by_label("Started to (inclusive)", exact=True).fill(
        (today - dt.timedelta(days=2)).isoformat())
    page.get_by_role("button", name="Show calls").click()
    expect(calls.get_by_role("row")).to_have_count(1)
    expect(calls).to_contain_text(OTHER_CALLER)
    page.get_by_label("Started from", exact=True).fill("")
    page.get_by_label("Started to (inclusive)", exact=True).fill("")
    page.get_by_label("Caller's number (or part of it)", exact=True).fill("900 111")
    page.get_by_role("button", name="Show calls").click()
    expect(calls.get_by_role("row")).to_have_count(1)
    expect(calls).to_contain_text(TIMED_CALLER)
    _checked(page, f"call-log-filtered-{size}")
    page.get_by_label("Caller's number (or part of it)", exact=True).fill("not a number")
    page.get_by_role("button", name="Show calls").click()
    expect(page.get_by_role("status")).to_contain_text(
        "Caller's number must be a telephone number")

    timed = deployment["calls"][TIMED_CALLER]
    _visit(page, f"/calls/{timed}", size)
    details = page.locator("#call")
    expect(details).to_contain_text(f"{LINE} (Front desk)")
    expect(details).to_contain_text("Reception")
    expect(page.locator("#transcript li").first).to_contain_text(OPENING)
    turn = page.locator("#turns").get_by_role("row")
    expect(turn).to_have_count(1)
    for shown in ("0.8 s", "1.2 s", "1.6 s", "4.3 s"):
        expect(turn).to_contain_text(shown)
    _checked(page, f"call-timings-{size}")


@pytest.mark.parametrize("size", SIZES)
def test_the_telephone_screen_gives_this_deployments_addresses_and_dialplan_to_copy(
        signed_in, size):
    page = signed_in
    _visit(page, "/admin/telephone", size)
    voice = f"{PUBLIC}/api/telephony/carrier/voice"
    expect(page.get_by_text(voice, exact=True)).to_be_visible()
    expect(page.get_by_text("wss://calls.example.org/api/telephony/carrier/media",
                            exact=True)).to_be_visible()
    dialplan = page.locator("#dialplan")
    expect(dialplan).to_contain_text(f"SVC_AUDIO={LISTEN}")
    expect(dialplan).to_contain_text(" same => n,AudioSocket(${ID},${SVC_AUDIO})")
    expect(page.get_by_role("heading", name=re.compile("carrier"))).to_be_visible()
    expect(page.get_by_role("heading", name=re.compile("pbx"))).to_be_visible()
    _checked(page, f"telephone-connect-{size}")
    page.get_by_role("button", name="Copy the address for A call comes in").click()
    expect(page.get_by_role("status")).to_have_text("Copied to your clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == voice
    page.get_by_role("button", name="Copy the dialplan").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("[globals]") and f"SVC_AUDIO={LISTEN}" in copied
