"""The console's pages over plain HTTP: who is sent to sign in, which screens answer
404, the sign-in form's own refusals, and that pages stay out of the API document."""

from __future__ import annotations

import re

import pytest

from app.console.pages import STATIC_DIR
from tests.support.http import session_header

PASSWORD = "correct horse battery staple"


@pytest.mark.anyio
async def test_a_visitor_is_sent_to_sign_in_and_comes_back_afterwards(api, services):
    await services.accounts.create("ann@example.org", PASSWORD, "user", ())
    first = await api.get("/profile/keys")
    assert first.status_code == 303
    assert first.headers["location"] == "/login?next=/profile/keys"
    form = await api.get("/login?next=/profile/keys")
    assert form.status_code == 200 and 'name="next" value="/profile/keys"' in form.text
    assert "frame-ancestors 'none'" in form.headers["content-security-policy"]
    signed = await api.post("/login", data={"email": "ann@example.org", "password": PASSWORD,
                                            "next": "/profile/keys"})
    assert signed.status_code == 303 and signed.headers["location"] == "/profile/keys"
    assert "svc_session" in signed.cookies
    page = await api.get("/profile/keys", headers=session_header(signed.cookies))
    assert page.status_code == 200 and "<h1>API keys</h1>" in page.text


@pytest.mark.anyio
async def test_the_form_refuses_a_wrong_password_another_site_and_a_foreign_next(api, services):
    await services.accounts.create("ann@example.org", PASSWORD, "user", ())
    wrong = await api.post("/login", data={"email": "ann@example.org", "password": "x" * 12})
    assert wrong.status_code == 401 and 'role="alert"' in wrong.text
    assert "svc_session" not in wrong.cookies
    nul = await api.post("/login", data={"email": "ann@example.org\x00", "password": PASSWORD})
    assert nul.status_code == 401 and 'role="alert"' in nul.text
    foreign = await api.post("/login", headers={"Origin": "https://elsewhere.example"},
                             data={"email": "ann@example.org", "password": PASSWORD})
    assert foreign.status_code == 403 and "svc_session" not in foreign.cookies
    proxied = await api.post("/login", headers={"Origin": "http://127.0.0.1:8080"},
                             data={"email": "ann@example.org", "password": PASSWORD})
    assert proxied.status_code == 303  # server.public_url: the address behind a proxy
    for target in ("https://elsewhere.example/", "//elsewhere.example/", "/\\elsewhere"):
        answer = await api.post("/login", data={"email": "ann@example.org",
                                                "password": PASSWORD, "next": target})
        assert answer.headers["location"] == "/"


@pytest.mark.anyio
async def test_a_screen_the_caller_may_not_use_is_neither_offered_nor_served(api, services):
    await services.accounts.create("ann@example.org", PASSWORD, "user", ())
    await services.accounts.create("tel@example.org", PASSWORD, "user", ("telephony.manage",))
    ann = await api.console_session("ann@example.org", PASSWORD)
    home = await api.get("/", headers=ann)
    assert 'href="/profile/keys"' in home.text and 'href="/admin/usage"' not in home.text
    assert 'href="/admin/telephone"' not in home.text
    for path in ("/admin/usage", "/admin/accounts", "/admin/configuration", "/admin/telephone",
                 "/admin/telephone/calls", "/admin/providers", "/owner/diary"):
        assert (await api.get(path, headers=ann)).status_code == 404, path
    tel = await api.console_session("tel@example.org", PASSWORD)
    assert (await api.get("/admin/telephone/calls", headers=tel)).status_code == 200
    assert (await api.get("/admin/configuration", headers=tel)).status_code == 200
    assert (await api.get("/admin/usage", headers=tel)).status_code == 404


@pytest.mark.anyio
async def test_key_management_leaves_the_console_when_the_public_api_is_off(api, services):
    admin = await services.accounts.create("root@example.org", PASSWORD, "superadmin", ())
    from app.services.accounts import Identity

    await services.settings.change(Identity.from_row(admin), "features.public_api", False)
    session = await api.console_session("root@example.org", PASSWORD)
    assert 'href="/profile/keys"' not in (await api.get("/", headers=session)).text
    assert (await api.get("/profile/keys", headers=session)).status_code == 404


@pytest.mark.anyio
async def test_pages_and_scripts_are_served_but_left_out_of_the_api_document(api):
    script = await api.get("/static/console.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    paths = (await api.get("/openapi.json")).json()["paths"]
    assert "/api/profile/api-keys" in paths
    assert not {"/", "/login", "/logout", "/profile/keys"} & set(paths)


@pytest.mark.anyio
async def test_a_page_that_carries_an_id_refuses_anything_that_is_not_one(api, services):
    """A call page's address could otherwise carry another path into the requests its
    script builds (``..%2F..%2Flibraries%2F<id>%3Fx=``: its delete button deleting a
    Library)."""
    await services.accounts.create("tel@example.org", PASSWORD, "user", ("telephony.manage",))
    tel = await api.console_session("tel@example.org", PASSWORD)
    known = "0b0e3b9c-2f6a-4c9e-9a53-6a4f3c1d2e7f"
    page = await api.get(f"/calls/{known}", headers=tel)
    assert page.status_code == 200 and f'data-call-id="{known}"' in page.text
    for smuggled in (f"..%2F..%2Flibraries%2F{known}%3Fx=", f"{known}%3Fx=1", f"{{{known}}}",
                     known.replace("-", ""), f"urn:uuid:{known}", "%2E%2E", "x"):
        refused = await api.get(f"/calls/{smuggled}", headers=tel)
        assert refused.status_code == 404, smuggled
        assert refused.headers["content-type"].startswith("text/html")
        assert "data-call-id" not in refused.text


@pytest.mark.anyio
async def test_api_paths_take_only_ids_in_their_one_spelling(api, services):
    admin = await api.as_new_user(services, "root@example.org", role="admin")
    library = (await api.post("/api/libraries", headers=admin, json={"name": "Notes"})).json()
    assert (await api.get(f"/api/libraries/{library['id']}", headers=admin)).status_code == 200
    for spelling in (library["id"].replace("-", ""), f"{{{library['id']}}}",
                     f"urn:uuid:{library['id']}"):
        answer = await api.get(f"/api/libraries/{spelling}", headers=admin)
        assert answer.status_code == 404, spelling
        assert answer.json()["error"]["code"] == "not_found"
    me = (await api.get("/api/me", headers=admin)).json()["id"]
    assert (await api.get(f"/api/admin/users/{me.replace('-', '')}",
                          headers=admin)).status_code == 404


def test_the_console_scripts_encode_what_they_put_in_an_address():
    """Every ``${…}`` after a ``/`` or ``=`` in a script's template strings is encoded."""
    raw = re.compile(r"[/=]\$\{(?!encodeURIComponent\()")
    offenders = [f"{script.name}:{number}"
                 for script in sorted(STATIC_DIR.glob("*.js"))
                 for number, line in enumerate(script.read_text().splitlines(), 1)
                 if raw.search(line)]
    assert offenders == []

# Raw query strings, as an attacker's link would carry them: each decodes to something a
# browser would take to another host (or to a script) if it were sent back as Location.
_FOREIGN_NEXT = ("//evil.example", "/%5Cevil.example", "/%5C/evil.example",
                 "%2F%2Fevil.example", "/%2F/evil.example", "/%09/evil.example",
                 "/%0A/evil.example", "/%0D/evil.example", "%09//evil.example",
                 "/%20/evil.example", "https:evil.example", "https://evil.example",
                 "javascript:alert(1)", "JaVaScRiPt%3Aalert(1)", "evil.example",
                 "/%255Cevil.example", "/%00/evil.example", "/%7F/evil.example")


@pytest.mark.anyio
async def test_next_is_only_ever_a_path_on_this_server(api, services):
    await services.accounts.create("ann@example.org", PASSWORD, "user", ())
    session = await api.console_session("ann@example.org", PASSWORD)
    api.cookies.clear()
    for raw in _FOREIGN_NEXT:
        form = await api.get(f"/login?next={raw}")
        assert 'name="next" value="/"' in form.text, raw
        signed_in = await api.get(f"/login?next={raw}", headers=session)
        assert signed_in.headers["location"] == "/", raw
    kept = await api.get("/login?next=/admin/usage%3Fday%3D1", headers=session)
    assert kept.headers["location"] == "/admin/usage?day=1"


@pytest.mark.anyio
async def test_the_api_document_page_loads_only_from_this_server(api):
    import re

    page = await api.get("/docs")
    assert page.status_code == 200
    assert "default-src 'self'" in page.headers["content-security-policy"]
    references = re.findall(r'(?:src|href)="([^"]*)"', page.text)
    assert references and all(ref.startswith("/") and not ref.startswith("//")
                              for ref in references), references
    assert "<script>" not in page.text  # no inline script under the policy
    for ref in references:
        asset = await api.get(ref)
        assert asset.status_code == 200 and asset.content, ref
    assert "SwaggerUIBundle" in (await api.get("/docs/assets/swagger-ui-bundle.js")).text
    assert (await api.get("/docs/assets/index.html")).status_code == 404
    assert (await api.get("/docs/assets/..%2F__init__.py")).status_code == 404
