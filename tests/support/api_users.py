"""A new user and an API key of theirs, made over HTTP on a running server."""

from __future__ import annotations

import re
import secrets

import httpx


def user_with_key(base: str, root: dict[str, str], email: str,
                  key_name: str = "tests") -> tuple[str, dict[str, str]]:
    """The user's API key and signed-in session; ``root`` is a superadmin's session."""
    password = secrets.token_urlsafe(16)
    made = httpx.post(f"{base}/api/admin/users", headers=root,
                      json={"email": email, "password": password})
    assert made.status_code == 201, made.text
    token = httpx.post(f"{base}/api/auth/login",
                       json={"email": email, "password": password}).json()["token"]
    session = {"Authorization": f"Bearer {token}"}
    key = httpx.post(f"{base}/api/profile/api-keys", headers=session,
                     json={"name": key_name}).json()["key"]
    return key, session


def first_admin(base: str, printed: str) -> dict[str, str]:
    """The first superadmin's session, from the one-time password a first start
    printed; the password is changed first, since nothing else is allowed before."""
    password = re.search(r"one-time password (\S+)", printed).group(1)
    token = httpx.post(f"{base}/api/auth/login", json={
        "email": "admin@localhost", "password": password}).json()["token"]
    root = {"Authorization": f"Bearer {token}"}
    changed = httpx.post(f"{base}/api/me/password", headers=root, json={
        "current_password": password, "new_password": secrets.token_urlsafe(15)})
    assert changed.status_code == 204, changed.text
    return root
