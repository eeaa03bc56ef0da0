"""Signing in and out, sessions, and the gates every route uses."""

import re

import pytest

from tests.support.http import session_header

pytestmark = pytest.mark.anyio

PASSWORD = "correct horse battery staple"


async def test_login_returns_a_session_usable_as_bearer_and_cookie(api, services):
    await services.accounts.create("Ann@Example.org", PASSWORD)
    response = await api.post("/api/auth/login", json={"email": "ann@example.org",
                                                       "password": PASSWORD})
    assert response.status_code == 200
    token = response.json()["token"]
    assert "httponly" in response.headers["set-cookie"].lower()
    me = await api.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200 and me.json()["email"] == "ann@example.org"
    assert "password_hash" not in me.text
    api.cookies.set("svc_session", token)
    assert (await api.get("/api/me")).status_code == 200


async def test_wrong_password_and_unknown_email_get_the_same_401(api, services):
    await services.accounts.create("ann@example.org", PASSWORD)
    wrong_password = await api.post("/api/auth/login", json={"email": "ann@example.org",
                                                             "password": "not the password"})
    unknown_email = await api.post("/api/auth/login", json={"email": "bob@example.org",
                                                            "password": "not the password"})
    assert wrong_password.status_code == unknown_email.status_code == 401
    assert wrong_password.json() == unknown_email.json()


async def test_repeated_failures_for_one_account_are_slowed_down(api, services):
    await services.accounts.create("ann@example.org", PASSWORD)
    bad = {"email": "ann@example.org", "password": "guess guess guess"}
    statuses = [(await api.post("/api/auth/login", json=bad)).status_code for _ in range(7)]
    assert statuses[:5] == [401] * 5
    assert 429 in statuses[5:]
    refused = await api.post("/api/auth/login", json={"email": "ann@example.org",
                                                      "password": PASSWORD})
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.json()["error"]["code"] == "too_many_attempts"


async def test_failed_and_slowed_sign_ins_are_tallied_by_account_and_address(api, services):
    ann = await services.accounts.create("ann@example.org", PASSWORD)
    boss = await api.as_new_user(services, "boss@example.org", role="admin")
    bad = {"email": "ann@example.org", "password": "guess guess guess"}
    statuses = [(await api.post("/api/auth/login", json=bad)).status_code for _ in range(8)]
    # A password typed into the email field must not reach the trail.
    await api.post("/api/auth/login", json={"email": "hunter2-typed-here",
                                            "password": "guess guess guess"})
    trail = (await api.get("/api/admin/audit", headers=boss)).json()["data"]
    entries = {(e["kind"], e["subject_name"]): e for e in trail
               if e["kind"].startswith("account.sign_in_")}
    assert set(entries) == {("account.sign_in_failed", "ann@example.org"),
                            ("account.sign_in_slowed", "ann@example.org"),
                            ("account.sign_in_failed", None)}
    failed = entries[("account.sign_in_failed", "ann@example.org")]
    assert failed["subject"] == str(ann["id"]) and failed["actor_id"] is None
    assert failed["occurrences"] == statuses.count(401)
    assert entries[("account.sign_in_slowed", "ann@example.org")]["occurrences"] == (
        statuses.count(429))
    unknown = entries[("account.sign_in_failed", None)]
    assert unknown["subject"] is None and unknown["occurrences"] == 1
    assert set(unknown["data"]) == {"address"} and "hunter2" not in str(trail)


async def test_a_right_password_adds_nothing_to_the_trail(api, services):
    await services.accounts.create("ann@example.org", PASSWORD)
    before = await services.audit.query()
    answer = await api.post("/api/auth/login", json={"email": "ann@example.org",
                                                     "password": PASSWORD})
    assert answer.status_code == 200 and await services.audit.query() == before


async def test_logout_ends_the_session(api, services):
    headers = await api.as_new_user(services, "ann@example.org")
    assert (await api.post("/api/auth/logout", headers=headers)).status_code == 204
    assert (await api.get("/api/me", headers=headers)).status_code == 401


async def test_a_deactivated_accounts_sessions_stop_at_once(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    user = await api.as_new_user(services, "ann@example.org")
    changed = await api.deactivate(admin, await api.account_id(user))
    assert changed.status_code == 200 and changed.json()["deactivated"] is True
    assert (await api.get("/api/me", headers=user)).status_code == 401
    again = await api.post("/api/auth/login", json={"email": "ann@example.org",
                                                    "password": PASSWORD})
    assert again.status_code == 401


async def test_no_session_is_401_and_unknown_token_is_401(api):
    assert (await api.get("/api/me")).status_code == 401
    assert (await api.get("/api/me", headers={"Authorization": "Bearer nope"})).status_code == 401


NEW_PASSWORD = "a new long password"


async def change_password(api, headers: dict[str, str], current: str):
    """The answer to changing the password of ``headers``' account to NEW_PASSWORD."""
    return await api.post("/api/me/password", headers=headers,
                          json={"current_password": current, "new_password": NEW_PASSWORD})


async def test_password_change_needs_the_current_password(api, services):
    headers = await api.as_new_user(services, "ann@example.org")
    assert (await change_password(api, headers, "nope")).status_code == 401
    assert (await change_password(api, headers, PASSWORD)).status_code == 204
    await api.login("ann@example.org", NEW_PASSWORD)


async def test_a_burst_of_guesses_gets_only_the_free_checks(api, services, monkeypatch):
    """Attempts sent at once are counted one after another: once the free failures are
    used, the rest are refused before any password is checked."""
    import anyio

    import dataclasses

    from app.services import accounts, sign_in_attempts
    from core.throttle import ACCOUNT_POLICY

    # The first wait after the free failures is long here, so the burst is refused
    # however slowly a busy machine sends it (at the real 1 s, one more check is due).
    patient = dataclasses.replace(ACCOUNT_POLICY, first_wait_seconds=600.0)
    monkeypatch.setattr(sign_in_attempts, "_DIMENSIONS",
                        (("email", patient), *sign_in_attempts._DIMENSIONS[1:]))
    await services.accounts.create("ann@example.org", PASSWORD)
    checked = []
    real_verify = accounts.password_matches

    async def counting_verify(stored_hash, password):
        checked.append(password)
        return await real_verify(stored_hash, password)

    monkeypatch.setattr(accounts, "password_matches", counting_verify)
    statuses = []

    async def guess(number):
        answer = await api.post("/api/auth/login", json={"email": "ann@example.org",
                                                         "password": f"guess {number:04}"})
        statuses.append(answer.status_code)

    async with anyio.create_task_group() as burst:
        for number in range(ACCOUNT_POLICY.free_failures + 15):
            burst.start_soon(guess, number)
    assert len(checked) == ACCOUNT_POLICY.free_failures
    assert sorted(statuses) == [401] * ACCOUNT_POLICY.free_failures + [429] * 15


async def test_a_password_change_ends_every_other_session_of_the_account(api, services):
    await services.accounts.create("ann@example.org", PASSWORD)
    here = {"Authorization": f"Bearer {await api.login('ann@example.org', PASSWORD)}"}
    elsewhere = {"Authorization": f"Bearer {await api.login('ann@example.org', PASSWORD)}"}
    bob = await api.as_new_user(services, "bob@example.org")
    assert (await change_password(api, here, PASSWORD)).status_code == 204
    assert (await api.get("/api/me", headers=here)).status_code == 200
    assert (await api.get("/api/me", headers=elsewhere)).status_code == 401
    assert (await api.get("/api/me", headers=bob)).status_code == 200


async def test_the_first_superadmin_changes_the_one_time_password_before_anything(api, services):
    one_time = await services.accounts.ensure_first_superadmin()
    token = await api.login("admin@localhost", one_time)
    headers = {"Authorization": f"Bearer {token}"}
    for method, path in (("GET", "/api/admin/users"), ("GET", "/api/projects"),
                         ("GET", "/api/profile/api-keys")):
        refused = await api.request(method, path, headers=headers)
        assert refused.status_code == 403, path
        assert refused.json()["error"]["code"] == "password_change_required"
    me = await api.get("/api/me", headers=headers)
    assert me.status_code == 200 and me.json()["password_change_required"] is True
    api.cookies.clear()
    console = session_header({"svc_session": token})
    for page in ("/", "/admin/accounts", "/profile/keys"):
        sent = await api.get(page, headers=console)
        assert sent.status_code == 303 and sent.headers["location"] == "/profile/password"
    assert (await api.get("/profile/password", headers=console)).status_code == 200
    assert (await change_password(api, headers, one_time)).status_code == 204
    assert (await api.get("/api/admin/users", headers=headers)).status_code == 200
    assert (await api.get("/", headers=console)).status_code == 200
    assert (await api.get("/api/me", headers=headers)).json()["password_change_required"] is False


# What an account whose one-time password is unchanged may do: see itself, change the
# password, sign out.
_BEFORE_THE_CHANGE = {("GET", "/api/me"), ("POST", "/api/me/password"),
                      ("POST", "/api/auth/logout"), ("POST", "/logout")}


def _every_api_route():
    from blacksheep.server.routing import Router

    from app.main import ROUTE_MODULES

    router = Router()
    for module in ROUTE_MODULES:
        module.register(router)
    router.apply_routes()
    for method, routes in router.routes.items():
        for route in routes:
            if method != b"GET_WS":
                yield method.decode(), route.pattern.decode()


async def test_no_route_serves_an_account_before_its_one_time_password_is_changed(
        api, services):
    one_time = await services.accounts.ensure_first_superadmin()
    token = await api.login("admin@localhost", one_time)
    api.cookies.clear()
    served = []
    for method, pattern in _every_api_route():
        if (method, pattern) in _BEFORE_THE_CHANGE:
            continue
        path = re.sub(r"\{[a-z_]+\}", "00000000-0000-4000-8000-000000000000", pattern)
        for credentials in ({"headers": {"Authorization": f"Bearer {token}"}},
                            {"headers": session_header({"svc_session": token})}):
            answer = await api.request(method, path, json={}, **credentials)
            if answer.status_code < 300:
                served.append((method, pattern, answer.status_code))
    # Besides them, only what answers everyone: health, the sign-in page, and the page
    # where the password is changed.
    assert {(method, pattern) for method, pattern, _ in served} <= {
        ("GET", "/healthz"), ("GET", "/login"), ("GET", "/profile/password")}, served
    me = await api.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    assert me.json()["password_change_required"] is True


async def test_a_page_on_another_origin_cannot_change_anything_with_the_cookie(api, services):
    await services.accounts.create("ann@example.org", PASSWORD)
    token = await api.login("ann@example.org", PASSWORD)
    api.cookies.clear()
    bearer = {"Authorization": f"Bearer {token}"}
    library = (await api.post("/api/libraries", headers=bearer, json={"name": "Clinic"})).json()
    agent = (await api.post("/api/agents", headers=bearer,
                            json={"name": "Desk", "model": "local"})).json()
    ours = api.base_url.netloc.decode()
    elsewhere = "http://" + ours.rsplit(":", 1)[0] + ":1"  # same host, another port
    upload = f"/api/libraries/{library['id']}/documents?title=Notes"
    cookie = session_header({"svc_session": token})
    # A browser adds the credentials of a password-protected proxy in front by itself;
    # they do not make the cookie any less the browser's doing.
    proxy_password = {"Authorization": "Basic YW5uOnByb3h5LXBhc3N3b3Jk"}
    for browser_says in ({"Origin": elsewhere}, {"Origin": "null"},
                         {"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Site": "cross-site"},
                         {"Origin": elsewhere, **proxy_password}):
        uploaded = await api.post(upload, content=b"planted", headers={
            "Content-Type": "text/plain", **browser_says, **cookie})
        archived = await api.post(f"/api/agents/{agent['id']}/archive",
                                  headers={**browser_says, **cookie})
        for refused in (uploaded, archived):
            assert refused.status_code == 403, (browser_says, refused.text)
            assert refused.json()["error"]["code"] == "cross_origin"
    documents = await api.get(f"/api/libraries/{library['id']}/documents", headers=bearer)
    assert documents.json()["data"] == []
    assert (await api.get(f"/api/agents/{agent['id']}", headers=bearer)).json()["archived"] \
        is False
    # Where JSON is expected, another content type is refused before anything is read.
    as_text = await api.post("/api/projects", content=b'{"name": "P"}', headers={
        "Content-Type": "text/plain", "Origin": f"http://{ours}", **cookie})
    assert as_text.status_code == 415
    # The console's own fetches, a key holder from anywhere, and a script with no browser.
    same = await api.post(upload, content=b"kept", headers={
        "Content-Type": "text/plain", "Origin": f"http://{ours}",
        "Sec-Fetch-Site": "same-origin", **cookie})
    assert same.status_code == 201, same.text
    keyed = await api.post(upload, content=b"kept", headers={
        "Content-Type": "text/plain", "Origin": elsewhere, **bearer})
    assert keyed.status_code == 201, keyed.text
    scripted = await api.post(f"/api/agents/{agent['id']}/archive", headers=cookie)
    assert scripted.status_code in (200, 204), scripted.text
