"""The console in a browser, as the administrator of a fresh install: set up a Library,
an agent and a provider without curl; the telephone settings and readiness checks;
register, edit and enable a line; read the call log, open a call, read its transcript
and play its recording.

The tests run in file order against one server, as one administrator's afternoon: each
starts from what the one before set up (the agent, then the line, then its calls).
"""

from __future__ import annotations

import datetime as dt
import re
import uuid

import pytest

from tests.browser.conftest import (
    PASSWORD,
    fresh_tab,
    note_beside,
    removed_from_the_keyboard,
    open_screen,
    require_api,
    screenshot,
    settled,
    sign_in,
)
from tests.browser.harness import accessibility_violations, sideways_scroll, write_recording
from tests.browser.playwright_expect import expect

ROOT = "root@example.com"
OWNER = "reception@example.com"
CALLS = 30


@pytest.fixture(scope="module", autouse=True)
def accounts(console):
    console.run(console.services.accounts.create(ROOT, PASSWORD, "superadmin", ()))
    console.run(console.services.accounts.create(OWNER, PASSWORD, "user", ()))


def test_a_fresh_install_is_set_up_from_the_console(page, tmp_path):
    sign_in(page, ROOT)
    open_screen(page, "Libraries")
    page.get_by_label("Name", exact=True).fill("Practice handbook")
    page.get_by_label("Description", exact=True).fill("Opening hours and fees")
    page.get_by_role("button", name="Create Library").click()
    expect(page.get_by_role("status")).to_contain_text("Practice handbook is created")
    handbook = tmp_path / "fees.md"
    handbook.write_text("# Fees\n\nA first consultation costs 80 pounds and lasts an hour.\n")
    page.get_by_label("Document (text, Markdown or HTML)", exact=True).set_input_files(str(handbook))
    page.get_by_role("button", name="Upload").click()
    expect(page.get_by_role("status")).to_contain_text("fees.md is uploaded")
    expect(page.locator("#documents")).to_contain_text("text/markdown")
    expect(page.locator("#libraries")).to_contain_text("1")
    screenshot(page, "libraries")

    open_screen(page, "Agents")
    page.get_by_label("Name", exact=True).fill("Reception")
    page.get_by_label("Model", exact=True).select_option("local")
    page.get_by_label("Instructions", exact=True).fill("Answer from the handbook; take messages.")
    page.get_by_label("Practice handbook", exact=True).check()
    page.get_by_role("button", name="Create agent").click()
    expect(page.locator("#agents")).to_contain_text("Practice handbook")
    page.get_by_role("button", name="Edit Reception").click()
    expect(page.get_by_label("Practice handbook")).to_be_checked()
    page.get_by_label("Instructions").fill("Answer from the handbook; take messages; be brief.")
    page.get_by_role("button", name="Save agent").click()
    expect(page.get_by_role("status")).to_have_text("Reception is saved.")
    expect(page.locator("#agents").get_by_role("row", name=re.compile("^Reception"))).to_contain_text(
        "Practice handbook")

    open_screen(page, "Providers")
    page.get_by_label("Name", exact=True).fill("office-gpu")
    page.get_by_label("Base address (…/v1)", exact=True).fill("http://127.0.0.1:9/v1")
    page.get_by_label("Models, one per line (empty: ask the server)", exact=True).fill("llama-small\nllama-large")
    page.get_by_role("button", name="Register provider").click()
    expect(page.locator("#providers")).to_contain_text("llama-large, llama-small")
    screenshot(page, "providers")


def test_telephone_settings_checks_and_a_line_from_registration_to_enabled(page):
    sign_in(page, ROOT)
    page.goto("/admin/telephone")
    settled(page)
    expect(page.locator("#t-credential-state")).to_have_text("not stored")
    page.locator("#t-provider").select_option("carrier")
    page.get_by_label("Public address (https)", exact=True).fill("https://phones.example.com")
    page.get_by_label("Carrier credential", exact=True).fill("carrier-auth-token-0123456789")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_role("status")).to_contain_text("settings are saved")
    expect(page.locator("#t-credential-state")).to_have_text("stored")
    assert "carrier-auth-token" not in page.content()  # write-only
    guide = page.locator("#connect")  # the carrier's addresses follow at once
    expect(guide.get_by_text("https://phones.example.com/api/telephony/carrier/voice",
                             exact=True)).to_be_visible()
    expect(guide.get_by_text("wss://phones.example.com/api/telephony/carrier/media",
                             exact=True)).to_be_visible()

    page.get_by_role("button", name="Run the checks").click()
    checks = page.locator("#checks")
    expect(checks.get_by_role("row")).to_have_count(11)
    expect(checks.get_by_role("row", name=re.compile("^carrier_credential"))).to_contain_text("pass")
    expect(checks.get_by_role("row", name=re.compile("^lines"))).to_contain_text("fail")

    page.get_by_label("Number", exact=True).fill("+44 (0)20 7946 0000")
    expect(page.get_by_role("note").filter(has_text="Leave out the (0)")).to_be_visible()
    page.get_by_label("Number", exact=True).fill("+44 20 7946 0000")
    page.get_by_label("Label", exact=True).fill("Front desk")
    page.get_by_label("Agent", exact=True).select_option(label="Reception")
    page.get_by_label("Account the line answers for", exact=True).select_option(label=OWNER)
    page.get_by_label("Record calls", exact=True).check()
    page.get_by_label("Keep recordings (days)", exact=True).fill("30")
    page.get_by_role("button", name="Register line").click()
    expect(page.get_by_role("status")).to_contain_text("switched off until you enable it")
    row = page.locator("#lines").get_by_role("row", name=re.compile(r"\+442079460000"))
    expect(row).to_contain_text("disabled")
    expect(row).to_contain_text(OWNER)

    row.get_by_role("button", name="Edit +442079460000").click()
    page.get_by_label("Label", exact=True).fill("Front desk, main")
    page.get_by_role("button", name="Save line").click()
    expect(row).to_contain_text("Front desk, main")
    row.get_by_role("button", name="Enable +442079460000").click()
    expect(row).to_contain_text("enabled")
    page.get_by_role("button", name="Run the checks").click()
    expect(checks.get_by_role("row", name=re.compile("^lines"))).to_contain_text("pass")
    screenshot(page, "telephone")

    page.get_by_label("Number", exact=True).fill("0044 20 7946 0999")
    page.get_by_label("Agent", exact=True).select_option(label="Reception")
    page.get_by_label("Account the line answers for", exact=True).select_option(label=OWNER)
    page.get_by_role("button", name="Register line").click()
    spare = page.locator("#lines").get_by_role("row", name=re.compile(r"\+442079460999"))
    expect(spare).to_contain_text("disabled")
    spare.get_by_role("button", name="Release +442079460999").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("+442079460999 is released")
    expect(page.locator("#lines").get_by_role("row")).to_have_count(1)


async def _calls_on_the_line(console) -> str:
    """Thirty finished calls on the line; the newest has a transcript and a recording."""
    from app import db
    from app.tables import Chat, ChatMessage

    async with db.connection() as connection:
        line = await connection.fetchrow("SELECT id, e164, agent_id, owner_user_id "
                                         "FROM telephony_line")
        start = dt.datetime.now(dt.UTC) - dt.timedelta(hours=CALLS + 1)
        ids = []
        for n in range(CALLS):
            ids.append(await connection.fetchval(
                "INSERT INTO telephony_call (id, number_id, e164, from_number, provider, "
                "owner_id, agent_id, outcome, started_at, media_started_at, ended_at) "
                "VALUES ($1, $2, $3, $4, 'carrier', $5, $6, $7, $8, $8, $9) RETURNING id",
                uuid.uuid4(), line["id"], line["e164"], f"+4477009000{n:02d}",
                line["owner_user_id"], line["agent_id"],
                "transferred" if n % 5 == 0 else "completed",
                start + dt.timedelta(hours=n), start + dt.timedelta(hours=n, seconds=95)))
    newest = ids[-1]
    chat = Chat(owner_id=line["owner_user_id"], agent_id=line["agent_id"], source="telephone",
                title="Call from +447700900029")
    await chat.save()
    await ChatMessage.insert(
        ChatMessage(chat_id=chat.id, role="user", content="How much is a first consultation?"),
        ChatMessage(chat_id=chat.id, role="assistant",
                    content="A first consultation costs 80 pounds and lasts an hour."))
    async with db.connection() as connection:
        await connection.execute("UPDATE telephony_call SET chat_id = $2 WHERE id = $1",
                                 newest, chat.id)
    write_recording(console, newest)
    return str(newest)


def test_the_call_log_filters_pages_and_opens_a_call_with_transcript_and_recording(page, console):
    newest = console.run(_calls_on_the_line(console))
    sign_in(page, ROOT)
    open_screen(page, "Call log")
    calls = page.locator("#calls")
    expect(calls.get_by_role("row")).to_have_count(CALLS)
    page.get_by_label("Calls per page", exact=True).select_option("25")
    page.get_by_role("button", name="Show calls").click()
    expect(calls.get_by_role("row")).to_have_count(25)
    expect(calls.get_by_role("row").first).to_contain_text("+447700900029")
    page.get_by_role("button", name="Older calls").click()
    expect(calls.get_by_role("row")).to_have_count(CALLS - 25)
    expect(page.get_by_role("button", name="Older calls")).to_be_disabled()
    page.get_by_role("button", name="Newest calls").click()
    expect(calls.get_by_role("row")).to_have_count(25)
    page.get_by_label("Outcome", exact=True).select_option("transferred")
    page.get_by_label("Line", exact=True).select_option(label="+442079460000 (Front desk, main)")
    page.get_by_role("button", name="Show calls").click()
    expect(calls.get_by_role("row")).to_have_count(CALLS // 5)
    screenshot(page, "call-log")

    page.get_by_label("Outcome", exact=True).select_option("")
    page.get_by_role("button", name="Show calls").click()
    calls.get_by_role("link", name=re.compile("from \\+447700900029")).click()
    page.wait_for_url(f"**/calls/{newest}")
    expect(page.locator("#call")).to_contain_text("completed")
    expect(page.locator("#transcript")).to_contain_text("80 pounds")
    screenshot(page, "call-with-transcript")
    require_api(console, "GET", f"/api/telephony/calls/{newest}/recording")
    page.get_by_role("button", name="Play the recording").click()
    player = page.locator("#player")
    expect(player).to_be_visible()
    expect(player).to_have_js_property("readyState", 4)  # the whole recording is loaded
    assert player.evaluate("p => p.duration") == pytest.approx(1.0, abs=0.05)
    assert player.evaluate("p => p.error") is None
    screenshot(page, "call-with-recording")
    page.get_by_role("button", name="Delete the recording").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_have_text("The recording is deleted.")
    assert not (console.services.boot.recordings_dir / f"{newest}.wav").exists()
    page.reload()
    settled(page)
    page.get_by_role("button", name="Play the recording").click()
    expect(page.locator("#recording")).to_contain_text("no recording of this call")
    expect(page.locator("#transcript")).to_contain_text("80 pounds")  # the words stay


async def _usage(console) -> None:
    from app.services.usage import UsageRecord

    services = console.services
    root = await services.accounts.authenticate(ROOT, PASSWORD, "127.0.0.1")
    for source, prompt, completion in (("app", 120, 40), ("api", 300, 90), ("api", 30, 9),
                                       ("telephone", 60, 20)):
        services.usage.record(UsageRecord(root["id"], "local", "local", source, "ok",
                                          prompt, completion, 40))
    await services.usage.drain()


def test_usage_is_charted_by_day_and_source(page, console):
    console.run(_usage(console))
    sign_in(page, ROOT)
    open_screen(page, "Usage")
    bars = page.locator("#chart-requests svg rect")
    expect(bars).to_have_count(3)  # today's three sources, stacked
    assert {bars.nth(i).get_attribute("class") for i in range(3)} == {"app", "api", "telephone"}
    expect(page.locator("#chart-tokens svg title").filter(has_text="api: 429 tokens")).to_have_count(1)
    expect(page.locator("#by-source").get_by_role("row", name=re.compile("^api"))).to_contain_text("2")
    expect(page.locator("#by-user")).to_contain_text(ROOT)
    expect(page.locator("#by-model")).to_contain_text("local")
    screenshot(page, "usage")
    page.get_by_label("From", exact=True).fill("2026-01-01")
    page.get_by_label("To (inclusive)", exact=True).fill("2026-01-31")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#by-source")).to_have_text("No usage in this range.")
    expect(page.locator("#chart-requests svg rect")).to_have_count(0)
    assert "2026-01-31" in page.locator("#chart-requests svg").get_attribute("aria-label")


def test_an_account_is_created_granted_and_given_the_telephone_feature(page, console):
    sign_in(page, ROOT)
    open_screen(page, "Accounts")
    page.get_by_label("Email", exact=True).fill("switchboard@example.com")
    page.get_by_label("Password (at least 10 characters)").fill("a long enough password")
    page.locator("#n-permissions").get_by_label("telephony.manage").check()
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("status")).to_contain_text("switchboard@example.com is created")
    row = page.locator("#accounts").get_by_role("row", name=re.compile("switchboard@example.com"))
    expect(row).to_contain_text("telephony.manage")
    row.get_by_role("button", name="Manage switchboard@example.com").click()
    flag = page.get_by_label("features.telephony for switchboard@example.com")
    flag.select_option("true")
    expect(page.get_by_role("status")).to_contain_text("features.telephony for switchboard@example.com: on")
    screenshot(page, "accounts")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, "switchboard@example.com", "a long enough password")
    nav = page.get_by_role("navigation", name="Screens")
    for offered in ("Call log", "Telephone", "Diary", "Configuration"):
        expect(nav.get_by_role("link", name=offered)).to_be_visible()
    for withheld in ("Accounts", "Usage", "Providers"):
        expect(nav.get_by_role("link", name=withheld)).to_have_count(0)
    open_screen(page, "Telephone")
    expect(page.get_by_role("heading", name="Telephone settings")).to_have_count(0)  # break-glass


def test_a_provider_deleted_from_the_keyboard_leaves_the_focus_on_its_list(page):
    sign_in(page, ROOT)
    open_screen(page, "Providers")
    page.get_by_label("Name", exact=True).fill("spare-gpu")
    page.get_by_label("Base address (…/v1)", exact=True).fill("http://127.0.0.1:9/v1")
    page.get_by_label("Models, one per line (empty: ask the server)", exact=True).fill("spare")
    page.get_by_role("button", name="Register provider").click()
    removed_from_the_keyboard(page, page.get_by_role("button", name="Delete spare-gpu"),
                              "spare-gpu is deleted.", "Providers")


def _save_public_address(page, address: str) -> None:
    page.get_by_label("Public address (https)", exact=True).fill(address)
    page.get_by_role("button", name="Save settings").click()


def test_the_guide_waits_for_the_new_address_when_a_page_comes_from_an_older_view(page):
    """With several server processes, the page fetched again after a save may come from
    one whose settings are a moment old: it is asked for again until its address is the
    saved one; and a guide that cannot be had leaves the settings saved all the same."""
    sign_in(page, ROOT)
    page.goto("/admin/telephone")
    settled(page)
    asked: list[str] = []
    stale = {"left": 1}

    def older_view(route):
        if route.request.resource_type != "fetch":
            route.continue_()
            return
        asked.append(route.request.url)
        answer = route.fetch()
        body = answer.text()
        if stale["left"]:
            stale["left"] -= 1
            body = body.replace("fresh-", "stale-")
        route.fulfill(response=answer, body=body)

    page.route("**/admin/telephone", older_view)
    _save_public_address(page, "https://fresh-one.example.com")
    status = page.get_by_role("status")
    expect(status).to_have_text("The telephone settings are saved.")
    guide = page.locator("#connect")
    expect(guide.get_by_text("https://fresh-one.example.com/api/telephony/carrier/voice",
                             exact=True)).to_be_visible()
    assert len(asked) == 2  # the older page, then the one with the saved address

    asked.clear()
    stale["left"] = 10  # every process keeps the old view longer than the page waits
    _save_public_address(page, "https://fresh-two.example.com")
    expect(status).to_have_text("Saved; reload the page to see the new addresses in the guide.")
    expect(status).to_have_class("status ok")
    assert len(asked) == 3
    expect(page.locator("#t-effective")).to_have_text("https://fresh-two.example.com")

    page.unroute("**/admin/telephone")
    page.evaluate("""() => {  // the page's text breaks off while it is read
        const text = Response.prototype.text;
        Response.prototype.text = function () {
          return this.url === location.href ? Promise.reject(new TypeError("network error"))
            : text.call(this);
        };
    }""")
    _save_public_address(page, "https://fresh-three.example.com")
    expect(status).to_have_text("Saved; reload the page to see the new addresses in the guide.")
    expect(status).to_have_class("status ok")


def test_a_provider_whose_models_cannot_be_listed_is_saved_with_a_warning(page):
    sign_in(page, ROOT)
    open_screen(page, "Providers")
    page.get_by_label("Name", exact=True).fill("ollama")
    page.get_by_label("Base address (…/v1)", exact=True).fill("http://127.0.0.1:9/v1")
    page.get_by_role("button", name="Register provider").click()
    status = page.get_by_role("status")
    expect(status).to_have_text("ollama is saved, but its models could not be listed: the "
                                "provider could not be reached. Check the address, or enter "
                                "the model names.")
    expect(status).to_have_class("status warning")
    expect(status).to_be_focused()
    expect(page.locator("#providers").get_by_role("row", name=re.compile("^ollama"))).to_contain_text(
        "none")
    screenshot(page, "provider-saved-with-a-warning")


WIDTHS = {"laptop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


def _open_form_is_clean(page, width: str) -> None:
    page.set_viewport_size(WIDTHS[width])
    screenshot(page, f"provider-edit-{width}")
    assert sideways_scroll(page) <= 0, f"the provider form scrolls sideways at {width} width"
    assert accessibility_violations(page) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_a_provider_is_edited_in_place_and_a_refusal_is_shown_beside_its_field(browser, console, width):
    """A provider whose models could not be listed is given its model names and a new
    address from its row's Edit, keyboard only; its stored key is kept; a name another
    provider has is refused beside the name, the typed values kept."""
    name = f"lab-gpu-{width}"
    with fresh_tab(browser, console, bypass_csp=True) as page:
        sign_in(page, ROOT)
        open_screen(page, "Providers")
        page.set_viewport_size(WIDTHS[width])
        page.get_by_label("Name", exact=True).fill(name)
        page.get_by_label("Base address (…/v1)", exact=True).fill("http://127.0.0.1:9/v1")
        page.get_by_label("API key (optional)", exact=True).fill("sk-lab-0123456789")
        page.get_by_role("button", name="Register provider").click()
        expect(page.get_by_role("status")).to_have_class("status warning")
        row = page.locator("#providers").get_by_role("row").filter(has_text=name)
        expect(row).to_contain_text("none")

        edit = row.get_by_role("button", name=f"Edit {name}")
        edit.focus()
        page.keyboard.press("Enter")
        form = page.locator("#provider-form")
        expect(page.get_by_role("heading", level=2, name=f"Edit {name}")).to_be_visible()
        field = page.get_by_label("Name", exact=True)
        expect(field).to_be_focused()
        expect(field).to_have_value(name)
        address = page.get_by_label("Base address (…/v1)", exact=True)
        expect(address).to_have_value("http://127.0.0.1:9/v1")
        key = form.get_by_label("API key", exact=False)
        expect(key).to_have_value("")
        expect(key).to_have_accessible_description(re.compile("keep the stored key"))
        _open_form_is_clean(page, "phone")
        _open_form_is_clean(page, "laptop")
        page.set_viewport_size(WIDTHS[width])

        page.keyboard.press("Tab")
        expect(address).to_be_focused()
        page.keyboard.press("ControlOrMeta+a")
        page.keyboard.type(f"http://127.0.0.1:9/{width}/v1")
        models = page.get_by_label("Models, one per line (empty: ask the server)", exact=True)
        models.focus()
        page.keyboard.type(f"{width}-small\n{width}-large")
        page.get_by_role("button", name="Save provider").focus()
        page.keyboard.press("Enter")
        expect(page.get_by_role("status")).to_have_text(f"{name} is saved.")
        expect(row).to_contain_text(f"{width}-large, {width}-small")
        expect(row).to_contain_text(f"http://127.0.0.1:9/{width}/v1")
        expect(row).to_contain_text("stored")  # the key left empty is kept
        expect(row.get_by_role("button", name=f"Edit {name}")).to_be_focused()
        expect(page.get_by_role("heading", level=2, name="Register a provider")).to_be_visible()

        page.keyboard.press("Enter")  # Edit again: a name another provider has
        expect(field).to_have_value(name)
        expect(models).to_have_value(f"{width}-large\n{width}-small")
        page.keyboard.press("ControlOrMeta+a")
        page.keyboard.type("office-gpu")
        models.fill(f"{width}-large\n{width}-small\n{width}-huge")
        field.press("Enter")
        expect(note_beside(page, field)).to_have_text("A provider with this name exists.")
        expect(field).to_be_focused()
        expect(field).to_have_value("office-gpu")
        expect(models).to_have_value(f"{width}-large\n{width}-small\n{width}-huge")
        _open_form_is_clean(page, width)

        page.get_by_role("button", name="Cancel editing").click()
        expect(page.get_by_role("heading", level=2, name="Register a provider")).to_be_visible()
        expect(field).to_have_value("")
        expect(row).to_contain_text(f"{width}-large, {width}-small")
        expect(row.get_by_role("button", name=f"Edit {name}")).to_be_focused()
        screenshot(page, f"provider-edited-{width}")
