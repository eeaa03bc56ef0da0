"""Who is calling, and the route-level gates.

Routes call one of these first: :func:`signed_in`, :func:`with_permission`,
:func:`break_glass`, and :func:`owner_or_admin` once they know a resource's owner.
A session comes as ``Authorization: Bearer <token>`` or the HttpOnly session cookie.
Refusals: no or unknown session 401; a missing permission 403; a resource that is not
the caller's 404, never 403, so its existence is not leaked. An account whose password
must be changed first (the first superadmin's one-time password) gets 403
``password_change_required`` everywhere but the few routes that let it do so.
"""

from __future__ import annotations

from uuid import UUID

from blacksheep import Request

from app.bundle import Services
from app.errors import Forbidden, NotFound, Unauthorized
from app.services.access import owner_or_admin
from app.services.accounts import Identity
from app.services.sessions import COOKIE_NAME
from core.ids import id_or_none


def bearer_token(request: Request) -> str | None:
    """The token of ``Authorization: Bearer``; None for no header or another scheme."""
    header = request.get_first_header(b"authorization")
    if header:
        scheme, _, token = header.decode("latin-1").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    return None


def session_token(request: Request) -> str | None:
    """The bearer token, else the session cookie: whichever identifies the caller."""
    return bearer_token(request) or request.cookies.get(COOKIE_NAME) or None


async def signed_in(request: Request, svc: Services, *,
                    before_password_change: bool = False) -> Identity:
    """The caller. ``before_password_change``: the route is one an account whose
    password must be changed may use (seeing itself, changing it, signing out)."""
    identity = getattr(request, "caller", None)
    if identity is None:
        token = session_token(request)
        identity = await svc.sessions.identify(token) if token else None
        if identity is None:
            raise Unauthorized("Sign in first.", code="not_signed_in")
        request.caller = identity  # type: ignore[attr-defined]
    if identity.password_change_required and not before_password_change:
        raise Forbidden("Change the one-time password first (POST /api/me/password).",
                        code="password_change_required")
    return identity


async def with_permission(request: Request, svc: Services, permission: str) -> Identity:
    identity = await signed_in(request, svc)
    if not identity.has(permission):
        raise Forbidden(f"This needs the {permission} permission.", code="permission_required")
    return identity


async def administrator(request: Request, svc: Services) -> Identity:
    identity = await signed_in(request, svc)
    if not identity.is_admin:
        raise Forbidden("This needs an administrator.", code="admin_required")
    return identity


async def break_glass(request: Request, svc: Services) -> Identity:
    identity = await signed_in(request, svc)
    if not identity.is_superadmin:
        raise Forbidden("This needs the super-administrator.", code="superadmin_required")
    return identity


def query_value(request: Request, name: str) -> str | None:
    """The first value of query parameter ``name``, or None."""
    values = request.query.get(name)
    return values[0] if values else None


async def addressed_account(request: Request, svc: Services, identity: Identity, *,
                            also_permission: str | None = None) -> UUID:
    """The account an owner-or-administrator endpoint acts on: the caller's own, or the
    one named by ``?account_id=`` when the caller is an administrator (or holds
    ``also_permission``). Naming another account without that, or one that does not
    exist, is the same 404 as for nothing at all."""
    named = query_value(request, "account_id")
    if named is None or named == str(identity.account_id):
        return identity.account_id
    allowed = identity.is_admin or (also_permission is not None
                                    and also_permission in identity.permissions)
    if not allowed:
        raise NotFound()
    account_id = id_or_none(named)
    if account_id is None:
        raise NotFound()
    await svc.accounts.find(account_id)  # 404 when there is no such account
    return account_id
