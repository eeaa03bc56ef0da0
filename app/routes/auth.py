"""Signing in and out, and the signed-in account (``/api/auth/*``, ``/api/me``)."""

from __future__ import annotations

from blacksheep import Request, Response, Router
from blacksheep.cookies import Cookie, CookieSameSiteMode

from app.bundle import Services
from app.errors import Unauthorized
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import session_token, signed_in
from app.services.accounts import public_view
from app.services.sessions import COOKIE_NAME


class LoginBody(Body):
    email: str
    password: str


class PasswordChangeBody(Body):
    current_password: str
    new_password: str


def session_cookie(svc: Services, value: str, expires=None) -> Cookie:
    """The HttpOnly session cookie, also set by the console's sign-in form."""
    cookie = Cookie(COOKIE_NAME, value, expires=expires, path="/", http_only=True,
                    same_site=CookieSameSiteMode.LAX)
    cookie.secure = svc.boot["server.public_url"].startswith("https://")
    return cookie


@accepts(LoginBody)
async def login(request: Request, svc: Services) -> Response:
    body = await read_body(request, LoginBody, svc.max_body_bytes)
    account = await svc.accounts.authenticate(body.email, body.password, request.client_ip)
    token, expires = await svc.sessions.open(account["id"])
    response = json_response(200, {"token": token, "expires_at": expires.isoformat(),
                                   "account": public_view(account)})
    response.set_cookie(session_cookie(svc, token, expires))
    return response


async def logout(request: Request, svc: Services) -> Response:
    await signed_in(request, svc, before_password_change=True)
    await svc.sessions.close(session_token(request) or "")
    response = Response(204)
    response.unset_cookie(COOKIE_NAME)
    return response


async def me(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc, before_password_change=True)
    account = await svc.accounts.find(identity.account_id)
    return json_response(200, {**public_view(account),
                               "password_change_required": account["password_change_required"]})


@accepts(PasswordChangeBody)
async def change_password(request: Request, svc: Services) -> None:
    identity = await signed_in(request, svc, before_password_change=True)
    body = await read_body(request, PasswordChangeBody, svc.max_body_bytes)
    if not await svc.accounts.verify_password(identity.account_id, body.current_password):
        raise Unauthorized("The current password is wrong.", code="invalid_credentials",
                           field="current_password")
    await svc.accounts.set_password(identity.account_id, body.new_password)
    # Whoever else held the old password is signed out; this session stays.
    await svc.sessions.close_others(identity.account_id, session_token(request) or "")


def register(router: Router) -> None:
    router.add_post("/api/auth/login", login)
    router.add_post("/api/auth/logout", logout)
    router.add_get("/api/me", me)
    router.add_post("/api/me/password", change_password)
