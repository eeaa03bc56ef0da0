"""Every console form answers the API's refusal beside the field it is about: for a
table of forms, a value the API refuses is sent (the browser's own checks set aside,
so the API has the last word), and the note must sit right under the refused field,
which is marked ``aria-invalid`` and described by it, in the form's words rather than
the API's field path, with the status line in the error style and the request's
reference. A failure about no field (403, 409, 500) shows at the top of the form in
plain words with the reference. Both at a phone's and a desktop's width, one page load
per form.

The translation of field paths itself (``field_errors.js``) is checked on a form built
in the page, without any request.
"""

from __future__ import annotations

import json
import re
from dataclasses import field
from typing import Callable

import httpx
import pytest

from core.records import frozen
from tests.browser.conftest import PASSWORD, note_beside, settled, signed_in_tab
from tests.browser.harness import accessibility_violations, sideways_scroll
from tests.browser.playwright_expect import expect

ROOT = "form-errors-root@example.com"
WIDTHS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
TOO_LONG = "x" * 201


@frozen
class Refused:
    """A form sent with a value its API refuses: where it is, the refused field (a CSS
    selector), what is typed in it and in the fields it needs besides, and the words
    the note must say."""

    address: str
    form: str
    field: str
    value: str
    says: str | re.Pattern
    others: dict[str, str] = field(default_factory=dict)
    # Steps a person takes to reach the form once the page is shown.
    reach: Callable | None = None
    # Whether the API answered (a refusal the page makes itself has no reference).
    asked: bool = True

    @property
    def name(self) -> str:
        return f"{self.address}{self.form}{self.field}"


def _open_documents(page, seeded):
    page.get_by_role("button", name=f"Documents of {seeded['library']}").click()
    page.locator("#upload").wait_for()
    page.locator("#doc-file").set_input_files(
        files=[{"name": "empty.txt", "mimeType": "text/plain", "buffer": b""}])


def _choose_line_people(page, seeded):
    page.locator("#l-agent").select_option(seeded["agent"])
    page.locator("#l-owner").select_option(seeded["root"])


def _manage_myself(page, seeded):
    page.get_by_role("button", name=f"Manage {ROOT}").click()
    page.locator("#g-role").select_option("user")


FORMS = [
    Refused("/profile/keys", "#mint", "#key-days", "5000", "Expires after must be 1 to 3650.",
            {"#key-name": "phone key"}),
    Refused("/profile/provider-keys", "#add", "#provider-key", "", "Key is required."),
    Refused("/profile/password", "#password", "#p-current", "not the password at all",
            "The current password is wrong.",
            {"#p-new": "a new password 1234", "#p-repeat": "a new password 1234"}),
    Refused("/profile/password", "#password", "#p-repeat", "another password 99",
            "The two new passwords differ.",
            {"#p-current": PASSWORD, "#p-new": "a new password 1234"}, asked=False),
    Refused("/owner/diary", "#diary", '[aria-label="Monday period 1 closes"]', "08:00",
            "Closing time must be after opening time."),
    Refused("/owner/diary", "#closure", "#c-day", "2020-01-01",
            re.compile(r"Closed on must be today \(\d{4}-\d\d-\d\d\) or later\.")),
    Refused("/owner/appointments", "#book", "#b-name", TOO_LONG,
            "Caller's name must be text of 1 to 200 characters.", {"#b-subject": "Check-up"}),
    Refused("/owner/screening", "#paste", "#s-note", "n" * 501,
            "Note for every name of this paste: at most 500 characters.",
            {"#s-names": "Ann Example"}),
    Refused("/owner/notify-targets", "#target-form", "#n-url", "http://example.com/hook",
            "Address must be an https:// address; plain http is only for a host named in "
            "egress.allow_hosts."),
    Refused("/owner/talk?line={line}", "#talk-form", "#talk-text", "t" * 2001,
            "You say: 1 to 2000 characters."),
    Refused("/chat?chat={chat}", "#rename-form", "#chat-title", TOO_LONG,
            "Title: 1 to 200 characters."),
    Refused("/agents", "#agent-form", "#a-name", "   ", "An agent name has 1 to 200 characters."),
    Refused("/libraries", "#library-form", "#lib-name", "   ",
            "A Library name has 1 to 200 characters."),
    Refused("/libraries", "#upload", "#doc-file", "", "The document has no text.",
            reach=_open_documents),
    Refused("/admin/providers", "#provider-form", "#p-url", "ftp://example.com/v1",
            "Base address must be an http(s) address.", {"#p-name": "elsewhere"}),
    Refused("/admin/accounts", "#new-account", "#n-email", "not-an-email",
            "Give a valid email address.", {"#n-password": PASSWORD}),
    Refused("/admin/accounts", "#grants", "#g-role", "",
            "You cannot deactivate or demote your own account.",
            reach=_manage_myself),
    Refused("/admin/configuration", "#area-limits-form",
            '[name="telephony.max_concurrent_calls"]', "0",
            "telephony.max_concurrent_calls must be at least 1."),
    Refused("/admin/telephone", "#settings", "#t-listen", "not an address",
            "Listen address is not a usable address: 'not an address' is not host:port; "
            "write it as 10.0.0.5:9092 or [fd00::5]:9092."),
    Refused("/admin/telephone", "#line-form", "#l-e164", "12",
            "'12' is not a telephone number in E.164 form: it must start with + or 00 (or set "
            "telephony.default_region to read national numbers).",
            reach=_choose_line_people),
    Refused("/admin/telephone/calls", "#filters", "#f-since", "2030-01-02",
            "The first day must be before the last day.", {"#f-through": "2030-01-01"}),
    Refused("/admin/usage", "#range", "#since", "2030-01-02",
            "The first day must be before the last day.", {"#through": "2030-01-01"}),
    Refused("/audit", "#audit-filters", "#a-until", "2020-01-01T00:00",
            "The end must be later than the start.", {"#a-since": "2021-01-01T00:00"}),
]


def _created(answer: httpx.Response) -> dict:
    assert answer.status_code < 300, answer.text
    return answer.json()


@pytest.fixture(scope="module")
def seeded(console):
    """A superadmin with a Library, an agent, a line, a conversation and an open diary."""
    root = console.run(console.services.accounts.create(ROOT, PASSWORD, "superadmin", ()))
    with httpx.Client(base_url=console.base_url) as client:
        _created(client.post("/api/auth/login", json={"email": ROOT, "password": PASSWORD}))
        library = _created(client.post("/api/libraries", json={"name": "Handbook"}))
        agent = _created(client.post("/api/agents", json={"name": "Desk", "model": "local"}))
        line = _created(client.post("/api/admin/telephony/numbers", json={
            "e164": "+441632960077", "agent_id": agent["id"],
            "owner_user_id": str(root["id"])}))
        chat = _created(client.post("/api/chats", json={"agent_id": agent["id"]}))
        _created(client.post("/api/admin/providers", json={
            "name": "elsewhere-seeded", "base_url": "https://models.example.com/v1",
            "models": ["seeded-model"]}))
        _created(client.put("/api/diary", json={
            "timezone": "Europe/London", "slot_minutes": 30, "lead_minutes": 0,
            "horizon_days": 14, "enabled": True,
            "hours": [{"weekday": d, "opens_minute": 540, "closes_minute": 1020}
                      for d in range(7)]}))
    return {"root": str(root["id"]), "library": library["name"], "agent": agent["id"],
            "line": line["id"], "chat": chat["id"]}


@pytest.fixture(scope="module")
def tab(console, seeded, browser):
    """One signed-in page for the module (its script policy lifted so axe-core can
    be put in)."""
    with signed_in_tab(browser, console, ROOT, bypass_csp=True) as page:
        yield page


def _show(page, address: str, width: str) -> None:
    page.set_viewport_size(WIDTHS[width])
    page.goto(address)
    settled(page)
    # The API is the last word: the browser's own checks (required, min, maxlength)
    # are set aside so the value reaches it.
    page.evaluate("document.querySelectorAll('form').forEach((f) => { f.noValidate = true; })")


def _type(page, selector: str, value: str) -> None:
    """Put ``value`` in a field as it stands, past any maxlength."""
    page.locator(selector).evaluate(
        "(e, v) => { if (e.type !== 'file' && e.tagName !== 'SELECT') e.value = v; }", value)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", FORMS, ids=lambda case: case.name)
def test_a_refused_value_is_shown_beside_its_field(tab, seeded, case, width):
    _show(tab, case.address.format(**seeded), width)
    if case.reach:
        case.reach(tab, seeded)
    for selector, value in {**case.others, case.field: case.value}.items():
        _type(tab, selector, value)
    form = tab.locator(case.form)
    form.locator("button[type=submit]").click()
    refused = tab.locator(case.field)
    expect(note_beside(tab, refused)).to_have_text(case.says)
    expect(refused).to_be_focused()
    expect(form.locator(".field-error")).to_have_count(1)
    status = tab.locator("#status")
    expect(status).to_have_class("status error")
    expect(status).to_contain_text(case.says)
    if case.asked:
        expect(status).to_contain_text("Reference: ")
    else:  # the page's own refusal: its words alone, nothing after them
        expect(status).to_have_text(f"Not done: {case.says}")
    assert sideways_scroll(tab) <= 0, f"{case.name} scrolls sideways when refused"
    assert accessibility_violations(tab) == []


FAILURES = [
    (403, {"code": "forbidden", "message": "You may not do that.", "field": None}),
    (409, {"code": "name_taken", "message": "That name is taken.", "field": None}),
    (500, {"code": "internal_error", "message": "Something went wrong on our side.",
           "field": None}),
]


def _answering(status: int, body: dict, reference: str, method: str = "POST"):
    """A route handler answering ``method`` with ``status`` and our error body."""
    def answer(route):
        if route.request.method != method:
            return route.continue_()
        return route.fulfill(status=status, body=json.dumps(body), headers={
            "content-type": "application/json", "x-request-id": reference})
    return answer


@pytest.mark.parametrize("width", WIDTHS)
def test_a_failure_about_no_field_is_shown_at_the_top_of_the_form(tab, width):
    _show(tab, "/libraries", width)
    form = tab.locator("#library-form")
    status = tab.locator("#status")
    for code, error in FAILURES:
        reference = f"req-{code}-{width}"
        tab.route("**/api/libraries", _answering(code, {"error": error}, reference))
        tab.locator("#lib-name").fill("Kept")
        form.locator("button[type=submit]").click()
        alert = form.get_by_role("alert")
        expect(alert).to_have_text(f"{error['message']} Reference: {reference}")
        expect(alert).to_have_class("form-error")
        expect(status).to_have_class("status error")
        expect(status).to_contain_text(reference)
        expect(form.locator("[aria-invalid]")).to_have_count(0)
        tab.unroute("**/api/libraries")
    # A bare answer without our body (a proxy's page) is put in plain words too.
    tab.route("**/api/libraries", lambda route: route.fulfill(status=502, body="<h1>Bad Gateway</h1>",
              headers={"content-type": "text/html"}) if route.request.method == "POST"
              else route.continue_())
    form.locator("button[type=submit]").click()
    expect(form.get_by_role("alert")).to_have_text(
        "Something went wrong on the server. Try again in a moment.")
    tab.unroute("**/api/libraries")
    # An action of a list's row (no form) fails in the status line, the same way.
    tab.route("**/api/libraries/*", _answering(409, {"error": FAILURES[1][1]}, "req-row",
                                               method="DELETE"))
    tab.get_by_role("button", name="Delete Handbook").click()
    tab.locator("#confirm-ok").click()
    expect(status).to_have_class("status error")
    expect(status).to_have_text("Not done: That name is taken. Reference: req-row")
    tab.unroute("**/api/libraries/*")
    assert sideways_scroll(tab) <= 0
    assert accessibility_violations(tab) == []


def test_the_field_paths_are_translated_to_the_forms_controls_and_words(tab):
    _show(tab, "/libraries", "desktop")
    said = tab.evaluate("""async () => {
        const { fieldOf, inWords } = await import("/static/field_errors.js");
        const form = document.createElement("form");
        form.innerHTML = `
          <p><label for="n">Number (with country code)</label><input id="n" name="e164"></p>
          <p><label for="h">Secret header</label><input id="h" name="secret_header_name"></p>
          <div data-row="hours"><input data-field="opens_minute" data-label="Opening time">
            <input data-field="closes_minute" data-label="Closing time"></div>
          <div data-row="hours"><input data-field="opens_minute" data-label="Opening time" id="o1">
            <input data-field="closes_minute" data-label="Closing time"></div>
          <ul><li><input type="checkbox" id="t0" data-list="tools" value="a"></li>
            <li><input type="checkbox" id="t1" data-list="tools" value="b" checked></li>
            <li><input type="checkbox" id="t2" data-list="tools" value="c" checked></li></ul>
          <p><label for="f">Document</label><input id="f" type="file" data-field="content media_type"></p>
          <p><label for="t">To</label><input id="t" name="through" data-field="until" data-label="The last day"></p>`;
        document.body.append(form);
        const at = (path) => { const c = fieldOf(form, path); return c ? c.id : null; };
        const words = (field, message) => inWords(form, { field, message }, fieldOf(form, field));
        const said = {
          places: [at("hours.1.opens_minute"), at("hours[1].opens_minute"), at("tools.1"),
                   at("tools"), at("secret_header_name"), at("media_type"), at("content"),
                   at("until"), at("e164"), at("nothing.here")],
          words: [
            words("hours.1.opens_minute", "hours.1.opens_minute: must be before closes_minute"),
            words("secret_header_name", "secret_header_name must be a header name such as X-Api-Key."),
            words("e164", "Field 'e164' is required."),
            words("until", "since must be before until."),
            words("nothing", "nothing: is wrong"),
            words("telephony.max_calls", "telephony.max_calls must be at least 1."),
            words("slot_minutes", "slot_minutes: Input should be a valid integer."),
          ],
        };
        form.remove();
        return said;
    }""")
    assert said["places"] == ["o1", "o1", "t2", "t0", "h", "f", "f", "t", "n", None]
    assert said["words"] == [
        "Opening time must be before closing time.",
        "Secret header must be a header name such as X-Api-Key.",
        "Number is required.",
        "Since must be before the last day.",
        "Nothing is wrong.",
        "telephony.max_calls must be at least 1.",
        "Slot minutes: Input should be a valid integer.",
    ]
