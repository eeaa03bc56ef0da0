"""The console's pages: signing in and out with an ordinary HTML form, and one page
per screen, rendered with BlackSheep's Jinja2 views.

A page carries the frame of its screen — navigation, headings, forms with their
labels, empty tables — and a small script that fills it from the JSON API under
``/api`` with the same session cookie. So the console can never do more than the API
allows: what it shows and changes, the API itself has authorised. Which screens are
offered is decided here, from ``app.console.screens``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs, quote

from blacksheep import Application, Request, Response, Router
from blacksheep.server.rendering.jinja2 import JinjaRenderer
from blacksheep.server.responses import see_other, view
from blacksheep.settings.html import html_settings
from jinja2 import PackageLoader

from app.console import checklist
from app.console.telephone_setup import telephone_context
from app.console.screens import (CALL_SCREEN, DOCUMENT_SCREEN, SCREENS, Screen, audience_of,
                                 navigation)
from app.bundle import Services
from app.errors import ApiError
from app.http.bodies import read_bytes
from app.http.docs import page
from app.http.errors import status_of
from app.http.same_origin import cross_origin
from app.http.security_headers import secured
from app.routes.auth import session_cookie
from app.services.accounts import Identity
from app.services.sessions import COOKIE_NAME
from core.ids import is_id

STATIC_DIR = Path(__file__).parent / "static"
# Where an account whose one-time password must be changed is sent, from every page.
PASSWORD_SCREEN = next(screen for screen in SCREENS if screen.template == "password")
MAX_FORM_BYTES = 8 * 1024
# What a screen's page is rendered with beyond its frame, by template (computed only
# for a caller the screen's gate lets in).
SCREEN_CONTEXT: dict[str, Callable[[Services], Awaitable[dict[str, Any]]]] = {
    "telephone": telephone_context,
}


def _page(template: str, status: int = 200, **context: Any) -> Response:
    return secured(view(template, None, status, **context))


# A path on this server as a browser reads it: it strips tabs and newlines anywhere and
# takes a backslash for a slash, so "/\t/evil.example" or "/\\evil.example" would leave
# for another host. Only visible ASCII without a backslash, and never "//" at the start;
# nor a slash or backslash still percent-encoded, which a proxy in front might decode.
_SAME_ORIGIN_PATH = re.compile(r"/(?![/\\])[!-\[\]-~]*")
_ENCODED_SLASH = re.compile(r"%(2f|5c)", re.IGNORECASE)


def _safe_next(target: str | None) -> str:
    """Only a path on this server: an absolute or scheme-relative address would let a
    link to our login page send the user elsewhere afterwards."""
    if (not target or not _SAME_ORIGIN_PATH.fullmatch(target)
            or _ENCODED_SLASH.search(target)):
        return "/"
    return target


async def _identity(request: Request, svc: Services) -> Identity | None:
    token = request.cookies.get(COOKIE_NAME)
    return await svc.sessions.identify(token) if token else None


def _to_login(request: Request) -> Response:
    here = request.url.path.decode("latin-1")
    return see_other(f"/login?next={quote(here, safe='/')}")


async def _render_screen(request: Request, svc: Services, screen: Screen, *,
                         ids: tuple[str, ...] = (), **context: Any) -> Response:
    """The screen's page; 404 when the caller may not use it or when any of ``ids``
    (the ids the address carries, which the page's script builds API addresses from)
    is not an id — so no address can smuggle another path into the script's requests."""
    identity = await _identity(request, svc)
    if identity is None:
        return _to_login(request)
    if identity.password_change_required and screen is not PASSWORD_SCREEN:
        return see_other(PASSWORD_SCREEN.path)
    audience = await audience_of(svc, identity)
    nav = navigation(audience)
    if not screen.gate(audience) or not all(is_id(given) for given in ids):
        return _page("not_found", 404, me=identity, nav=nav, current=None,
                     title="Not found")
    extra = SCREEN_CONTEXT.get(screen.template)
    if extra is not None:
        context.update(await extra(svc))
    return _page(screen.template, me=identity, nav=nav, current=screen, title=screen.title,
                 **context)


def screen_handler(screen: Screen):
    async def handler(request: Request, svc: Services) -> Response:
        return await _render_screen(request, svc, screen)

    handler.__name__ = f"console_{screen.template}"
    return handler


async def call_page(request: Request, svc: Services, call_id: str) -> Response:
    return await _render_screen(request, svc, CALL_SCREEN, ids=(call_id,), call_id=call_id)


async def document_page(request: Request, svc: Services, library_id: str,
                        document_id: str) -> Response:
    return await _render_screen(request, svc, DOCUMENT_SCREEN, ids=(library_id, document_id),
                                library_id=library_id, document_id=document_id)


async def home(request: Request, svc: Services) -> Response:
    identity = await _identity(request, svc)
    if identity is None:
        return see_other("/login")
    if identity.password_change_required:
        return see_other(PASSWORD_SCREEN.path)
    audience = await audience_of(svc, identity)
    return _page("home", me=identity, nav=navigation(audience), current=None,
                 title="Console", checklist=await checklist.checklist(audience))


# Paths a browser's page never lives under: what is not found there keeps the API's
# JSON answer, which scripts and clients parse.
_NOT_PAGES = ("/api/", "/v1/", "/v1", "/static/", "/docs")


def _wants_page(request: Request) -> bool:
    path = request.url.path.decode("latin-1")
    accept = (request.get_first_header(b"accept") or b"").decode("latin-1")
    return (request.method in ("GET", "HEAD") and "text/html" in accept
            and not path.startswith(_NOT_PAGES))


def not_found_fallback(svc: Services, otherwise):
    """An unknown console address, asked for by a browser, answers the console's own
    404 page (with its navigation when signed in); anything else answers as before."""

    async def fallback(request: Request) -> Response:
        if not _wants_page(request):
            return await otherwise(request)
        identity = await _identity(request, svc)
        nav = navigation(await audience_of(svc, identity)) if identity else None
        return _page("not_found", 404, me=identity, nav=nav, current=None, title="Not found")

    return fallback


async def login_form(request: Request, svc: Services) -> Response:
    target = _safe_next(request.query.get("next", ["/"])[0])
    if await _identity(request, svc) is not None:
        return see_other(target)
    return _page("login", next=target, email="", error=None, title="Sign in")


def _cross_site(request: Request, svc: Services) -> bool:
    """A form posted from another site: refused, so no page elsewhere can sign a visitor
    in or out of this console (the rule of every cookie-authenticated change)."""
    return cross_origin(request, svc.boot["server.public_url"])


async def login_submit(request: Request, svc: Services) -> Response:
    """The form's POST: the same check and session as ``POST /api/auth/login``."""
    if _cross_site(request, svc):
        return _page("login", 403, next="/", email="", title="Sign in",
                     error="Sign in from this server's own page.")
    form = parse_qs((await read_bytes(request, MAX_FORM_BYTES)).decode("utf-8", "replace"))
    email = form.get("email", [""])[0]
    password = form.get("password", [""])[0]
    target = _safe_next(form.get("next", ["/"])[0])
    try:
        account = await svc.accounts.authenticate(email, password, request.client_ip)
    except ApiError as refusal:  # wrong password (401) or slowed down (429)
        return _page("login", status_of(refusal), next=target, email=email,
                     error=refusal.message, title="Sign in")
    token, expires = await svc.sessions.open(account["id"])
    response = see_other(target)
    response.set_cookie(session_cookie(svc, token, expires))
    return secured(response)


async def logout_submit(request: Request, svc: Services) -> Response:
    if _cross_site(request, svc):
        return see_other("/")
    token = request.cookies.get(COOKIE_NAME)
    if token:
        await svc.sessions.close(token)
    response = see_other("/login")
    response.unset_cookie(COOKIE_NAME)
    return secured(response)


def register(router: Router) -> None:
    router.add_get("/", page(home))
    router.add_get("/login", page(login_form))
    router.add_post("/login", page(login_submit))
    router.add_post("/logout", page(logout_submit))
    for screen in SCREENS:
        router.add_get(screen.path, page(screen_handler(screen)))
    router.add_get(CALL_SCREEN.path, page(call_page))
    checklist.register(router)
    router.add_get(DOCUMENT_SCREEN.path, page(document_page))


def configure_console(app: Application, svc: Services) -> None:
    """Templates from this package, its scripts and styles under ``/static``, and its
    404 page for an address no route has (after the routes, whose fallback it wraps)."""
    app.router.fallback = not_found_fallback(svc, app.router.fallback.handler)
    html_settings.use(JinjaRenderer(loader=PackageLoader("app.console", "templates")))
    app.serve_files(STATIC_DIR, root_path="static", cache_time=300, index_document=None)
