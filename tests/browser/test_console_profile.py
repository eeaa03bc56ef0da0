"""The console in a browser: signing in and out, screens offered by permission, and the
profile's API keys (minted once, copied, revoked after confirmation)."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.browser.conftest import PASSWORD, open_screen, screenshot, settled, sign_in
from tests.browser.playwright_expect import expect

USER = "member@example.com"
ADMIN = "boss@example.com"


@pytest.fixture(scope="module", autouse=True)
def accounts(console):
    console.run(console.services.accounts.create(USER, PASSWORD, "user", ()))
    console.run(console.services.accounts.create(ADMIN, PASSWORD, "admin", ()))


def test_a_wrong_password_is_refused_on_the_form_and_a_right_one_signs_in(page):
    page.goto("/")
    assert page.url.endswith("/login")
    page.get_by_label("Email", exact=True).fill(USER)
    page.get_by_label("Password", exact=True).fill("not the password at all")
    page.get_by_role("button", name="Sign in").click()
    assert page.get_by_role("alert").is_visible()
    assert "/login" in page.url
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Console").wait_for()
    screenshot(page, "home-ordinary-user")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile(r"/login$"))
    page.goto("/profile/keys")
    assert "/login?next=/profile/keys" in page.url


def test_an_ordinary_user_is_not_offered_the_admin_screens(page, console):
    sign_in(page, USER)
    nav = page.get_by_role("navigation", name="Screens")
    assert nav.get_by_role("link", name="API keys").is_visible()
    for title in ("Usage", "Configuration", "Telephone", "Providers", "Call log"):
        assert nav.get_by_role("link", name=title).count() == 0
    response = page.goto("/admin/usage")
    assert response.status == 404
    # and the API behind that screen answers as the API does
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    answer = httpx.get(f"{console.base_url}/api/admin/usage", cookies=cookies)
    assert answer.status_code == 403


def test_a_key_is_shown_once_copied_and_revoked_after_confirmation(page):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    sign_in(page, USER)
    page.goto("/profile/keys")
    settled(page)
    page.get_by_label("Name (what the key is for)", exact=True).fill("editor plugin")
    page.get_by_label("Expires after (days, optional)", exact=True).fill("30")
    page.get_by_role("button", name="Mint key").click()
    minted = page.locator("#minted-value")
    minted.wait_for()
    value = minted.inner_text()
    assert value.startswith("sk-svc-")
    assert page.get_by_text("you will not see this again").is_visible()
    row = page.get_by_role("row", name=re.compile("editor plugin"))
    assert value[:10] in row.inner_text()
    assert "never" in row.inner_text()  # never used yet
    page.get_by_role("button", name="Copy key").click()
    expect(page.get_by_role("status")).to_have_text("Copied to your clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == value
    screenshot(page, "api-key-minted")
    page.get_by_role("button", name="I have stored it").click()
    assert page.locator("#minted").is_hidden()
    page.reload()
    settled(page)
    assert value not in page.content()  # the value is never shown again

    row.get_by_role("button", name="Revoke editor plugin").click()
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    assert "active" in row.inner_text()
    row.get_by_role("button", name="Revoke editor plugin").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("is revoked")
    expect(row).to_contain_text("revoked")
    screenshot(page, "api-key-revoked")


def test_the_console_is_used_from_the_keyboard_with_a_visible_focus(page):
    page.goto("/login")
    expect(page.get_by_label("Email", exact=True)).to_be_focused()  # on arrival
    page.keyboard.type(USER)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Console").wait_for()
    page.keyboard.press("Tab")  # the skip link comes first and shows itself
    skip = page.get_by_role("link", name="Skip to the content")
    expect(skip).to_be_focused()
    assert skip.evaluate("a => a.getBoundingClientRect().left") >= 0
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # brand, sign out, then the first screen in the navigation
    focused = page.locator(":focus")
    expect(focused).to_have_text("Chat")
    outline = focused.evaluate("a => getComputedStyle(a).outlineStyle + ' ' + getComputedStyle(a).outlineWidth")
    assert outline == "solid 3px"
    page.keyboard.press("Enter")
    page.get_by_role("heading", level=1, name="Chat").wait_for()
    screenshot(page, "keyboard-focus")


def test_the_password_is_changed_after_giving_the_current_one(page, console):
    console.run(console.services.accounts.create("changer@example.com", PASSWORD, "user", ()))
    sign_in(page, "changer@example.com")
    open_screen(page, "Password")
    page.get_by_label("Current password").fill("not my password at all")
    page.get_by_label("New password (at least 10 characters)").fill("a brand new passphrase")
    page.get_by_label("New password again").fill("a brand new passphrase")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("status")).to_contain_text("current password is wrong")
    expect(page.get_by_label("Current password")).to_be_focused()
    page.get_by_label("Current password").fill(PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, "changer@example.com", "a brand new passphrase")


def test_a_user_stores_and_removes_a_key_of_their_own_for_a_provider(page, console):
    import uuid

    admin = console.run(console.services.accounts.authenticate(ADMIN, PASSWORD, "127.0.0.1"))
    console.run(console.services.providers.create(
        actor=admin["id"], name="office-gpu", base_url="http://127.0.0.1:9/v1", api_key=None,
        models=["llama-small"]))
    secret = f"sk-own-{uuid.uuid4().hex}"
    sign_in(page, USER)
    open_screen(page, "Provider keys")
    page.get_by_label("Provider", exact=True).select_option(label="office-gpu")
    page.get_by_label("Key", exact=True).fill(secret)
    page.get_by_role("button", name="Store key").click()
    expect(page.get_by_role("status")).to_have_text("Your key is stored.")
    row = page.locator("#keys").get_by_role("row", name=re.compile("office-gpu"))
    expect(row).to_be_visible()
    assert secret not in page.content()
    row.get_by_role("button", name="Remove the key for office-gpu").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.locator("#keys")).to_contain_text("You use the shared keys for every provider.")


def test_the_api_document_renders_from_this_server_under_the_policy(page, console):
    complaints: list[str] = []
    elsewhere: list[str] = []
    page.on("console", lambda message: message.type == "error"
            and complaints.append(message.text))
    page.on("request", lambda request: not request.url.startswith(
        (console.base_url, "data:", "blob:")) and elsewhere.append(request.url))
    page.goto("/docs")
    page.locator(".swagger-ui .opblock").first.wait_for()
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("svc")
    screenshot(page, "api-document")
    assert complaints == [] and elsewhere == []


def test_the_one_time_password_is_changed_before_anything_else(page, console):
    one_time = console.run(console.services.accounts.ensure_first_superadmin())
    sign_in(page, "admin@localhost", one_time)
    page.wait_for_url(re.compile(r"/profile/password$"))
    page.goto("/admin/accounts")
    page.wait_for_url(re.compile(r"/profile/password$"))
    settled(page)
    why = page.get_by_role("note")
    expect(why).to_have_text("This account's password was set for one use only. "
                             "Choose your own to continue.")
    nav = page.get_by_role("navigation", name="Screens")
    expect(nav.get_by_role("link")).to_have_count(1)  # the rest answer only once it is changed
    expect(nav.get_by_role("link", name="Password")).to_be_visible()
    page.get_by_label("Current password").fill(one_time)
    page.get_by_label("New password (at least 10 characters)").fill("my own passphrase now")
    page.get_by_label("New password again").fill("my own passphrase now")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    expect(why).to_have_count(0)
    open_screen(page, "Accounts")


def test_every_page_carries_its_own_icon_so_none_is_asked_for(page):
    """A browser asks for /favicon.ico, which is not there, unless the page names an
    icon: each page names one written into it, which the page's policy lets load."""
    for path, title in (("/login", "Sign in"), ("/no/such/screen", "Not found")):
        page.goto(path)
        page.get_by_role("heading", level=1, name=title).wait_for()
        icon = page.locator('link[rel="icon"]')
        expect(icon).to_have_count(1)
        assert icon.get_attribute("href").startswith("data:image/svg+xml,")
        shown = page.evaluate("""async () => {
            const image = new Image();
            image.src = document.querySelector('link[rel="icon"]').href;
            await image.decode();
            return image.naturalWidth > 0;
        }""")
        assert shown
