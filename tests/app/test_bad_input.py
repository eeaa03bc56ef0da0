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


@pytest.fixture
async def admin(api, services):
    return await api.as_new_user(services, "boss@example.org", role="admin")


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
