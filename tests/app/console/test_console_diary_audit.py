"""The console's appointments and audit-trail pages over plain HTTP: who is offered
them, and that each page carries its labelled form and its own script and styles."""

from __future__ import annotations

import pytest

from app.console.pages import STATIC_DIR

PASSWORD = "correct horse battery staple"
pytestmark = pytest.mark.anyio


async def _signed_in(api, email: str) -> dict[str, str]:
    return await api.console_session(email, PASSWORD)


async def test_the_audit_trail_is_an_administrators_screen(api, services):
    await services.accounts.create("ann@example.org", PASSWORD, "user", ())
    await services.accounts.create("boss@example.org", PASSWORD, "admin", ())
    ann = await _signed_in(api, "ann@example.org")
    assert (await api.get("/audit", headers=ann)).status_code == 404
    assert 'href="/audit"' not in (await api.get("/", headers=ann)).text
    boss = await _signed_in(api, "boss@example.org")
    assert 'href="/audit"' in (await api.get("/", headers=boss)).text
    page = await api.get("/audit", headers=boss)
    assert page.status_code == 200 and "<h1>Audit trail</h1>" in page.text
    for label in ('for="a-actor"', 'for="a-kind"', 'for="a-since"', 'for="a-until"'):
        assert label in page.text
    assert 'src="/static/audit.js"' in page.text and 'href="/static/audit.css"' in page.text


async def test_appointments_are_offered_with_the_diary(api, services):
    from app.services.accounts import Identity

    root = await services.accounts.create("root@example.org", PASSWORD, "superadmin", ())
    owner = await services.accounts.create("ann@example.org", PASSWORD, "user", ())
    await services.accounts.create("bob@example.org", PASSWORD, "user", ())
    bob = await _signed_in(api, "bob@example.org")
    assert (await api.get("/owner/appointments", headers=bob)).status_code == 404
    await services.features.set_override(Identity.from_row(root), owner["id"],
                                         "features.telephony", True)
    ann = await _signed_in(api, "ann@example.org")
    page = await api.get("/owner/appointments", headers=ann)
    assert page.status_code == 200 and "<h1>Appointments</h1>" in page.text
    for label in ('for="b-slot"', 'for="b-name"', 'for="b-contact"', 'for="b-subject"'):
        assert label in page.text
    assert 'src="/static/appointments.js"' in page.text


async def test_the_screens_scripts_and_styles_are_served(api):
    for name in ("appointments.js", "appointments.css", "audit.js", "audit.css",
                 "audit_sentences.js", "field_errors.js"):
        assert (STATIC_DIR / name).is_file()
        answer = await api.get(f"/static/{name}")
        assert answer.status_code == 200, name
