"""Bad input gets a clear 4xx in the error shape and changes nothing."""

import pytest

from app.tables import Account

pytestmark = pytest.mark.anyio


def assert_error_shape(response, status, code=None, field=None):
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"code", "message", "field"}
    assert error["message"]
    if code:
        assert error["code"] == code
    if field:
        assert error["field"] == field
    assert response.headers["x-request-id"]


async def _accounts() -> int:
    return await Account.count()


async def test_malformed_json_is_400(api, admin):
    before = await _accounts()
    response = await api.post("/api/admin/users", headers={**admin, "content-type": "application/json"},
                              content=b'{"email": ')
    assert_error_shape(response, 400, "malformed_json")
    assert await _accounts() == before


async def test_wrong_types_are_422_naming_the_field(api, admin):
    response = await api.post("/api/admin/users", headers=admin,
                              json={"email": "x@example.org", "password": 1234567890123})
    assert_error_shape(response, 422, field="password")


async def test_unknown_fields_are_422(api, admin):
    before = await _accounts()
    response = await api.post("/api/admin/users", headers=admin,
                              json={"email": "x@example.org", "password": "long enough pw",
                                    "is_god": True})
    assert_error_shape(response, 422, "unknown_field", "is_god")
    assert await _accounts() == before


async def test_missing_field_is_422(api, admin):
    response = await api.post("/api/admin/users", headers=admin, json={"email": "x@example.org"})
    assert_error_shape(response, 422, "required", "password")


async def test_oversized_body_is_413(api, admin, services):
    limit = services.max_body_bytes
    response = await api.post("/api/admin/users", headers=admin,
                              json={"email": "x@example.org", "password": "p" * (limit + 1)})
    assert_error_shape(response, 413)


async def test_json_required(api, admin):
    response = await api.post("/api/admin/users", headers=admin, content=b"email=x",
                              params={}, )
    assert_error_shape(response, 415)


async def test_unknown_ids_and_paths_are_404(api, admin):
    assert_error_shape(await api.get("/api/admin/users/not-a-uuid", headers=admin), 404)
    assert_error_shape(await api.get(
        "/api/admin/users/00000000-0000-0000-0000-000000000000", headers=admin), 404)
    assert_error_shape(await api.get("/no/such/path"), 404)


async def test_bad_email_and_short_password_are_refused(api, admin):
    assert_error_shape(await api.post("/api/admin/users", headers=admin,
                                      json={"email": "nope", "password": "long enough pw"}),
                       422, field="email")
    assert_error_shape(await api.post("/api/admin/users", headers=admin,
                                      json={"email": "a@b.org", "password": "short"}),
                       422, "password_too_short")


async def test_request_id_is_echoed_when_plain_and_made_otherwise(api):
    given = await api.get("/healthz", headers={"x-request-id": "abc-123"})
    assert given.headers["x-request-id"] == "abc-123"
    made = await api.get("/healthz", headers={"x-request-id": "bad id with spaces"})
    assert made.headers["x-request-id"] != "bad id with spaces"
    assert len(made.headers["x-request-id"]) == 32


async def test_a_nul_character_anywhere_in_a_body_is_422_naming_the_field(api, admin):
    # Found by HTTP fuzzing: PostgreSQL text cannot hold NUL, so "\u0000" reached the
    # database and failed there with a 500.
    before = await _accounts()
    response = await api.post("/api/admin/users", headers=admin, json={
        "email": "nul@example.org", "password": "long enough pass\u0000word", "role": "user"})
    assert_error_shape(response, 422, "invalid_value", "password")
    response = await api.post("/api/profile/api-keys", headers=admin, json={"name": "a\x00"})
    assert_error_shape(response, 422, "invalid_value", "name")
    assert await _accounts() == before


# Bodies that used to escape as a 500: past the JSON decoder's recursion, past Python's
# limit on converting long integers, and a lone surrogate PostgreSQL cannot encode.
_TOO_DEEP = b'{"name": ' + b"[" * 5000 + b"]" * 5000 + b"}"
_LONG_NUMBER = b'{"name": ' + b"9" * 5000 + b"}"
_NESTED_PAST_LIMIT = b'{"name": ' + b"[" * 100 + b"]" * 100 + b"}"


async def test_json_that_breaks_the_decoder_is_400(api, admin):
    for raw in (_TOO_DEEP, _LONG_NUMBER, _NESTED_PAST_LIMIT):
        response = await api.post("/api/projects", headers={
            **admin, "content-type": "application/json"}, content=raw)
        assert_error_shape(response, 400, "malformed_json")
    assert (await api.get("/api/projects", headers=admin)).json()["data"] == []


async def test_a_lone_surrogate_is_422_naming_the_field(api, admin):
    before = await _accounts()
    response = await api.post("/api/admin/users", headers={
        **admin, "content-type": "application/json"},
        content=b'{"email": "s@example.org", "password": "long enough \\ud800 pass"}')
    assert_error_shape(response, 422, "invalid_value", "password")
    response = await api.post("/api/projects", headers={
        **admin, "content-type": "application/json"}, content=b'{"name": "a\\udfff"}')
    assert_error_shape(response, 422, "invalid_value", "name")
    assert await _accounts() == before


async def test_bad_v1_bodies_are_400_in_the_openai_shape(api, services):
    from app.tables import Chat

    user = await api.as_new_user(services, "ann@example.org")
    key = (await api.post("/api/profile/api-keys", headers=user, json={"name": "cli"})).json()
    agent = (await api.post("/api/agents", headers=user,
                            json={"name": "Desk", "model": "local"})).json()
    bearer = {"Authorization": f"Bearer {key['key']}", "content-type": "application/json"}
    message = b'{"model": "agent/' + agent["id"].encode() + b'", "messages": [{"role": "user", '
    for raw, param in ((message + b'"content": "hello\\u0000there"}]}', "messages.0.content"),
                       (message + b'"content": "hello \\ud800"}]}', "messages.0.content"),
                       (_TOO_DEEP, None), (_LONG_NUMBER, None)):
        response = await api.post("/v1/chat/completions", headers=bearer, content=raw)
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["type"] == "invalid_request_error" and error["param"] == param
    assert await Chat.count() == 0


async def test_a_failed_query_logs_its_class_and_request_id_not_its_values(
        api, admin, services, monkeypatch, caplog):
    import asyncpg

    from app.log_format import JsonFormatter

    async def failing(*args, **kwargs):
        raise asyncpg.exceptions.DataError(
            "invalid input for query argument $1: 'my secret chat text' (bad)")

    monkeypatch.setattr(services.projects, "create", failing)
    with caplog.at_level("ERROR", logger="svc.http"):
        response = await api.post("/api/projects", headers={**admin, "x-request-id": "req-42"},
                                  json={"name": "my secret chat text"})
    assert_error_shape(response, 500, "internal_error")
    logged = "\n".join(JsonFormatter().format(record) for record in caplog.records)
    assert "DataError" in logged and "req-42" in logged
    assert "my secret chat text" not in logged


async def _library(api, headers) -> str:
    response = await api.post("/api/libraries", headers=headers, json={"name": "Handbook"})
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def test_a_nul_in_any_query_value_is_422_naming_the_parameter(api, owner, admin):
    from app.tables import AuditEntry, Document

    library = await _library(api, owner)
    audited = await AuditEntry.count()
    for path, headers, param in (
            (f"/api/admin/audit?kind=a%00b", admin, "kind"),
            (f"/api/libraries/{library}/documents?title=%00", owner, "title"),
            (f"/api/libraries/{library}/search?q=x%00", owner, "q"),
            ("/api/enquiries?status=new%00", owner, "status")):
        method = "POST" if "documents" in path else "GET"
        response = await api.request(method, path, content=b"hello",
                                     headers={**headers, "content-type": "text/plain"})
        assert_error_shape(response, 422, "invalid_value", param)
    assert await Document.count() == 0
    assert await AuditEntry.count() == audited


async def test_a_query_that_is_not_utf8_is_422(api, owner):
    # Encoded: a raw byte past ASCII is refused by the HTTP server itself (400).
    for query in ("title=%FF", "q=caf%E9", "%FF=1"):
        response = await api.get(f"/api/agents?{query}", headers=owner)
        assert_error_shape(response, 422, "invalid_value")
        assert "UTF-8" in response.json()["error"]["message"]


async def test_a_count_in_the_query_is_ascii_digits_within_its_bounds(api, owner, admin):
    library = await _library(api, owner)
    for value in ("9" * 5000, "%C2%B2", "%D9%A3", "-1", "0", "1e3", "+5",
                  "99999999999999999999"):
        for path, headers in ((f"/api/libraries/{library}/search?q=x&limit={value}", owner),
                              (f"/api/admin/audit?limit={value}", admin),
                              (f"/api/admin/audit?before={value}", admin),
                              (f"/api/enquiries?limit={value}", owner),
                              (f"/api/diary/slots?limit={value}", owner)):
            assert_error_shape(await api.get(path, headers=headers), 422, field=None)
    assert (await api.get(f"/api/libraries/{library}/search?q=x&limit=", headers=owner)
            ).status_code == 200
