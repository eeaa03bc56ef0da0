"""Account administration and the role rules around it."""

import pytest

pytestmark = pytest.mark.anyio


async def test_admin_creates_lists_and_grants_permissions(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    created = await api.post("/api/admin/users", headers=admin,
                             json={"email": "ann@example.org", "password": "long enough pw"})
    assert created.status_code == 201
    ann = created.json()
    assert ann["role"] == "user" and ann["permissions"] == []
    granted = await api.patch(f"/api/admin/users/{ann['id']}", headers=admin,
                              json={"permissions": ["telephony.manage"]})
    assert granted.json()["permissions"] == ["telephony.manage"]
    emails = [u["email"] for u in (await api.get("/api/admin/users", headers=admin)).json()["data"]]
    assert "ann@example.org" in emails


async def test_duplicate_email_is_409(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    again = await api.created_twice("/api/admin/users", admin, {
        "email": "ann@example.org", "password": "long enough pw"}, email="ANN@example.org")
    assert again.status_code == 409 and again.json()["error"]["code"] == "email_taken"


async def test_unknown_permission_is_refused(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    response = await api.post("/api/admin/users", headers=admin,
                              json={"email": "a@example.org", "password": "long enough pw",
                                    "permissions": ["everything"]})
    assert response.status_code == 422 and response.json()["error"]["field"] == "permissions"


async def test_only_the_superadmin_makes_administrators(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    root = await api.as_new_user(services, "root@example.org", role="superadmin")
    body = {"email": "new@example.org", "password": "long enough pw", "role": "admin"}
    assert (await api.post("/api/admin/users", headers=admin, json=body)).status_code == 403
    assert (await api.post("/api/admin/users", headers=root, json=body)).status_code == 201


async def test_ordinary_users_cannot_administer(api, services):
    user = await api.as_new_user(services, "ann@example.org")
    for screen in ("/api/admin/users", "/api/admin/audit"):
        assert (await api.get(screen, headers=user)).status_code == 403, screen


async def test_nobody_deactivates_their_own_account(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    response = await api.deactivate(admin, await api.account_id(admin))
    assert response.status_code == 422


async def test_permission_gate_uses_grants_and_admins_hold_all(services):
    from app.services.accounts import Identity
    import uuid

    user = Identity(uuid.uuid4(), "a@x", "user", frozenset({"voice.manage"}))
    admin = Identity(uuid.uuid4(), "b@x", "admin", frozenset())
    assert user.has("voice.manage") and not user.has("telephony.manage")
    assert all(admin.has(p) for p in ("telephony.manage", "voice.manage", "config.manage"))
    assert not admin.is_superadmin


async def test_owner_or_admin_answers_404_to_everyone_else():
    import uuid

    from app.errors import NotFound
    from app.http.guards import owner_or_admin
    from app.services.accounts import Identity

    owner = Identity(uuid.uuid4(), "a@x", "user", frozenset())
    other = Identity(uuid.uuid4(), "b@x", "user", frozenset({"telephony.manage"}))
    admin = Identity(uuid.uuid4(), "c@x", "admin", frozenset())
    owner_or_admin(owner, owner.account_id)
    owner_or_admin(admin, owner.account_id)
    with pytest.raises(NotFound):
        owner_or_admin(other, owner.account_id)
