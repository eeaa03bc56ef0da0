"""The chat screen and a document's page over plain HTTP: who is offered them, and a
document's address taking only ids."""

from __future__ import annotations

import pytest

PASSWORD = "correct horse battery staple"
KNOWN = "0b0e3b9c-2f6a-4c9e-9a53-6a4f3c1d2e7f"
OTHER = "5d1f7e2a-8c3b-4e6f-9a1d-2b7c4e8f0a13"

pytestmark = pytest.mark.anyio


async def signed_in(api, services):
    await services.accounts.create("ann@example.org", PASSWORD, "user", ())
    return await api.console_session("ann@example.org", PASSWORD)


async def test_the_chat_screen_is_offered_to_anyone_signed_in(api, services):
    assert (await api.get("/chat")).headers["location"] == "/login?next=/chat"
    session = await signed_in(api, services)
    home = await api.get("/", headers=session)
    assert 'href="/chat"' in home.text
    page = await api.get("/chat", headers=session)
    assert page.status_code == 200 and "<h1>Chat</h1>" in page.text
    assert '/static/chat.js' in page.text and 'role="log"' in page.text
    assert (await api.get("/static/chat.js")).status_code == 200


async def test_a_documents_page_carries_its_ids_and_refuses_anything_else(api, services):
    visitor = await api.get(f"/libraries/{KNOWN}/documents/{OTHER}")
    assert visitor.headers["location"] == f"/login?next=/libraries/{KNOWN}/documents/{OTHER}"
    session = await signed_in(api, services)
    page = await api.get(f"/libraries/{KNOWN}/documents/{OTHER}?passage=x", headers=session)
    assert page.status_code == 200 and "/static/document.js" in page.text
    assert f'data-library-id="{KNOWN}"' in page.text
    assert f'data-document-id="{OTHER}"' in page.text
    for library, document in ((f"{KNOWN}%3Fx=", OTHER), (KNOWN, "..%2F..%2Fchats"),
                              ("x", OTHER), (KNOWN, KNOWN.replace("-", ""))):
        refused = await api.get(f"/libraries/{library}/documents/{document}", headers=session)
        assert refused.status_code == 404, (library, document)
        assert "data-document-id" not in refused.text
