"""The chat and the agents screen in a browser: a streamed answer whose citation opens
the cited passage in its document, the conversation listed and renamed; an agent's
/v1 model id with ready requests, its tools chosen, and "Try it" opening the chat.
Each at a desktop and a phone's width, with nothing scrolling sideways."""

from __future__ import annotations

import httpx
import pytest

from app.services.accounts import Identity
from tests.browser.conftest import (
    PASSWORD,
    fresh_tab,
    open_as,
    removed_from_the_keyboard,
    screenshot,
    settled,
    sign_in,
)
from tests.browser.harness import accessibility_violations
from tests.browser.playwright_expect import expect

OWNER = "shop@example.com"
HOURS = ("We sell bread and cakes.\n\nThe shop opens at nine on Saturday mornings.\n"
         "Parking is free behind the building.")
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
EVERY_IMPACT = ("minor", "moderate", "serious", "critical")


@pytest.fixture(scope="module", autouse=True)  # the server before the browser's loop
def agent(console):
    """The owner's agent on the built-in model, answering from a Library of one document."""
    svc = console.services
    me = Identity.from_row(console.run(svc.accounts.create(OWNER, PASSWORD, "user", ())))
    library = console.run(svc.libraries.create(me, name="Shop"))
    console.run(svc.libraries.add_document(me, library["id"], title="Opening hours",
                                           media_type="text/plain", content=HOURS))
    return console.run(svc.agents.create(me, {"name": "Front desk", "model": "local",
                                              "library_ids": [library["id"]]}))


@pytest.fixture
def page(console, browser):  # the server first: it starts outside the browser's loop
    """A fresh tab whose page policy lets axe-core in (it is added as an inline script,
    which the console's own policy forbids)."""
    with fresh_tab(browser, console, bypass_csp=True) as tab:
        yield tab


def fits_sideways(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("size", SIZES)
def test_a_streamed_answer_cites_a_passage_that_opens_in_its_document(page, agent, size):
    page.set_viewport_size(dict(zip(("width", "height"), SIZES[size])))
    sign_in(page, OWNER)
    page.goto(f"/chat?agent={agent['id']}")
    settled(page)
    expect(page.get_by_label("Agent")).to_have_value(agent["id"])
    page.get_by_label("Your question").fill("When does the shop open on Saturday?")
    with page.expect_response(lambda r: r.url.endswith("/messages")) as sent:
        page.get_by_label("Your question").press("Enter")
    assert sent.value.headers["content-type"].startswith("text/event-stream")
    answer = page.locator("#messages li.assistant")
    source = answer.get_by_role("link", name="Opening hours", exact=True)
    source.wait_for()
    assert "opens at nine" in answer.inner_text()
    expect(page.get_by_role("log")).to_have_attribute("aria-live", "polite")
    assert accessibility_violations(page, impacts=EVERY_IMPACT) == []
    listed = page.get_by_role("link", name="When does the shop open on Saturday?")
    expect(listed).to_have_attribute("aria-current", "page")
    assert fits_sideways(page)
    screenshot(page, f"chat-answer-{size}")

    page.get_by_label("Title", exact=True).fill(f"Saturday hours ({size})")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("link", name=f"Saturday hours ({size})")).to_be_visible()
    expect(page.get_by_role("heading", level=2, name=f"Saturday hours ({size})")).to_be_visible()

    source.click()
    page.get_by_role("heading", level=2, name="Opening hours").wait_for()
    settled(page)
    cited = page.locator("mark#cited")
    expect(cited).to_contain_text("The shop opens at nine on Saturday mornings.")
    expect(cited).to_be_focused()
    assert "bread and cakes" in page.locator("#document-text").inner_text()
    assert fits_sideways(page)
    screenshot(page, f"chat-document-{size}")
    page.get_by_role("link", name="Back to the chat").click()
    settled(page)
    expect(page.get_by_role("heading", level=2, name=f"Saturday hours ({size})")).to_be_visible()


@pytest.mark.parametrize("size", SIZES)
def test_an_agent_shows_its_model_id_requests_and_tools(page, console, agent, size):
    page.set_viewport_size(dict(zip(("width", "height"), SIZES[size])))
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    sign_in(page, OWNER)
    page.goto("/agents")
    settled(page)
    model = f"agent/{agent['id']}"
    page.locator("summary", has_text="Front desk").click()
    origin = page.evaluate("window.location.origin")
    expect(page.locator(f"#model-{agent['id']}")).to_have_text(model)
    curl = page.locator(f"#curl-{agent['id']}").inner_text()
    assert f"curl {origin}/v1/chat/completions" in curl and f'"model": "{model}"' in curl
    python = page.locator(f"#python-{agent['id']}").inner_text()
    assert f'base_url="{origin}/v1"' in python and f'model="{model}"' in python
    # The requests scroll sideways on a phone: from the keyboard too.
    expect(page.get_by_role("region", name="The curl request for Front desk")).to_have_attribute(
        "tabindex", "0")
    assert accessibility_violations(page) == []
    page.get_by_role("button", name="Copy the model id of Front desk").click()
    assert page.evaluate("navigator.clipboard.readText()") == model
    assert fits_sideways(page)
    screenshot(page, f"agent-use-{size}")

    page.get_by_role("button", name="Edit Front desk").click()
    tool = page.get_by_role("checkbox", name="current_time")
    expect(tool).not_to_be_checked()
    assert "current_time — The current date" in page.locator("#a-tools").inner_text()
    assert "(reads only; usable on a call)" in page.locator("#a-tools").inner_text()
    tool.check()
    page.get_by_role("button", name="Save agent").click()
    expect(page.get_by_role("status")).to_have_text("Front desk is saved.")
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    saved = httpx.get(f"{console.base_url}/api/agents/{agent['id']}", cookies=cookies).json()
    assert saved["tools"] == ["current_time"]
    page.get_by_role("button", name="Edit Front desk").click()
    expect(page.get_by_role("checkbox", name="current_time")).to_be_checked()
    page.get_by_role("checkbox", name="current_time").uncheck()  # as it was, for the next size
    page.get_by_role("button", name="Save agent").click()
    expect(page.get_by_role("status")).to_have_text("Front desk is saved.")

    page.get_by_role("link", name="Try it: Front desk in the chat").click()
    page.get_by_role("heading", level=1, name="Chat").wait_for()
    settled(page)
    expect(page.get_by_label("Agent")).to_have_value(agent["id"])


def test_an_agent_archived_from_the_keyboard_leaves_the_focus_on_its_list(page):
    open_as(page, OWNER, "Agents")
    page.get_by_label("Name", exact=True).fill("Spare desk")
    page.get_by_label("Model", exact=True).select_option("local")
    page.get_by_role("button", name="Create agent").click()
    removed_from_the_keyboard(page, page.get_by_role("button", name="Archive Spare desk"),
                              "Spare desk is archived.", "Your agents")
