"""The console's first run: the home page's checklist and the endpoint that computes
it, and the console's own 404 page for an address no route has."""

from __future__ import annotations

import pytest

from tests.support.http import session_header

PASSWORD = "correct horse battery staple"
ADMIN = "admin@example.org"


async def _signed_in(api, services, email: str, role: str):
    await services.accounts.create(email, PASSWORD, role, ())
    answer = await api.post("/api/auth/login", json={"email": email, "password": PASSWORD})
    assert answer.status_code == 200
    return session_header(answer.cookies)


def _done(checklist: dict) -> dict[str, bool]:
    return {step["key"]: step["done"] for step in checklist["steps"]}


@pytest.mark.anyio
async def test_the_checklist_ticks_each_step_as_it_is_done(api, services):
    session = await _signed_in(api, services, ADMIN, "admin")
    first = (await api.get("/api/me/checklist", headers=session)).json()
    assert _done(first) == {"password": True, "provider": False, "library": False,
                            "agent": False, "api_key": False, "line": False, "diary": False}
    assert (first["done"], first["total"]) == (1, 7)
    assert {step["key"]: step["href"] for step in first["steps"]}["library"] == "/libraries"

    assert (await api.post("/api/libraries", json={"name": "Handbook"},
                           headers=session)).status_code == 201
    assert (await api.post("/api/profile/api-keys", json={"name": "editor"},
                           headers=session)).status_code == 201
    assert (await api.put("/api/diary", headers=session, json={
        "timezone": "Europe/London", "slot_minutes": 30, "lead_minutes": 0, "horizon_days": 7,
        "hours": [{"weekday": 0, "opens_minute": 540, "closes_minute": 1020}]})).status_code == 200
    later = (await api.get("/api/me/checklist", headers=session)).json()
    assert _done(later) | {"library": True, "api_key": True, "diary": True} == _done(later)
    assert later["done"] == 4

    home = await api.get("/", headers=session)
    assert home.status_code == 200
    assert "4 of 7 steps done." in home.text
    assert '<progress max="7" value="4"' in home.text
    assert 'href="/admin/providers">Add a model provider</a>' in home.text
    assert 'href="/docs"' in home.text


@pytest.mark.anyio
async def test_a_user_is_offered_only_the_steps_they_may_take(api, services):
    session = await _signed_in(api, services, "ann@example.org", "user")
    steps = _done((await api.get("/api/me/checklist", headers=session)).json())
    # no provider (administrators') nor line (telephony.manage) nor diary (feature off)
    assert set(steps) == {"password", "library", "agent", "api_key"}
    api.cookies.clear()
    assert (await api.get("/api/me/checklist")).status_code == 401


@pytest.mark.anyio
async def test_an_unknown_console_address_answers_an_html_404_page(api, services):
    session = await _signed_in(api, services, ADMIN, "admin")
    browser = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    page = await api.get("/admin/no-such-screen", headers={**browser, **session})
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in page.text and 'aria-label="Screens"' in page.text
    assert "x-request-id" in page.headers
    api.cookies.clear()
    visitor = await api.get("/no/such/page", headers=browser)
    assert visitor.status_code == 404 and "<h1>Not found</h1>" in visitor.text
    # the API and programs keep the JSON answer
    for path, headers in (("/api/no-such-thing", browser), ("/v1/no-such-thing", browser),
                          ("/no/such/page", {"Accept": "application/json"})):
        answer = await api.get(path, headers=headers)
        assert answer.status_code == 404
        assert answer.headers["content-type"].startswith("application/json")
