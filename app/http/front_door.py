"""The first thing a request meets, before BlackSheep reads it (an ASGI middleware).

Behind the operator's reverse proxy the socket's peer is the proxy. When that peer is
one of ``server.trusted_proxies``, the client and scheme it forwarded
(``core.forwarded``) replace ``scope["client"]`` and ``scope["scheme"]``, so every
reader of ``request.client_ip`` and of the request's scheme (the carrier's lock-out,
the pbx's private-source check, the sign-in throttle, audit entries, the access log)
sees the real client without knowing a proxy exists.

Then requests that carry the console's session cookie, or that would set it (sign-in),
must name one of our own hosts (``core.host_names``): anything else is a page on
another site that rebound its name to this server, refused with 421.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from typing import Any, Awaitable, Callable

from blacksheep import Application

from app.http.direct_routes import DirectRoutes, Handler
from core.forwarded import TrustedProxies, origin, parse_trusted_proxies
from core.host_names import OwnHosts

Scope = dict[str, Any]
Asgi = Callable[[Scope, Any, Any], Awaitable[None]]

#: Where a session cookie is handed out: checked although no cookie came yet.
SIGN_IN_PATHS = frozenset({"/api/auth/login", "/login"})
_SECURE = {"http": "https", "ws": "wss"}
_PLAIN = {"https": "http", "wss": "ws"}


def _text_headers(scope: Scope) -> list[tuple[str, str]]:
    return [(name.decode("latin-1").lower(), value.decode("latin-1"))
            for name, value in scope.get("headers", ())]


def _scheme(current: str, proto: str | None) -> str:
    if proto == "https":
        return _SECURE.get(current, current)
    if proto == "http":
        return _PLAIN.get(current, current)
    return current


def _has_cookie(headers: list[tuple[str, str]], cookie_name: str) -> bool:
    for name, value in headers:
        if name != "cookie":
            continue
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(value)
        except CookieError:
            return True  # unreadable cookies are judged as if they held the session
        if cookie_name in jar:
            return True
    return False


@dataclass(eq=False)
class FrontDoor:
    inner: Asgi
    trusted: TrustedProxies
    own_hosts: OwnHosts
    cookie_name: str

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.inner(scope, receive, send)
        admitted = self.admitted(scope)
        if admitted is None:
            return await _refuse(scope, send)
        return await self.inner(admitted, receive, send)

    def admitted(self, scope: Scope) -> Scope | None:
        """The request's scope as the application is to see it (the client and scheme
        a trusted proxy forwarded), or None: a host name not ours, refused."""
        if not self.trusted.networks and not self._may_judge_host(scope):
            return scope  # the usual API call: no text made
        headers = _text_headers(scope)
        peer = (scope.get("client") or ("", 0))[0]
        if self.trusted.networks:
            found = origin(peer, headers, self.trusted)
            scope = dict(scope, scheme=_scheme(scope.get("scheme", "http"), found.proto))
            if found.client != peer:
                scope["client"] = (found.client, 0)
        return scope if self._own_host(scope, headers) else None

    @staticmethod
    def _may_judge_host(scope: Scope) -> bool:
        """Whether ``_own_host`` may refuse the request: a sign-in, or a cookie sent."""
        return scope.get("path") in SIGN_IN_PATHS or any(
            name.lower() == b"cookie" for name, _ in scope.get("headers", ()))

    def _own_host(self, scope: Scope, headers: list[tuple[str, str]]) -> bool:
        if scope.get("path") not in SIGN_IN_PATHS and not _has_cookie(headers,
                                                                      self.cookie_name):
            return True
        host = next((value for name, value in headers if name == "host"), None)
        return host in self.own_hosts


async def _refuse(scope: Scope, send) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = json.dumps({"error": {
        "code": "unknown_host", "field": None,
        "message": "This server does not answer to that host name; use its own address "
                   "(server.public_url)."}}).encode()
    await send({"type": "http.response.start", "status": 421, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class FrontDoorApplication(Application):
    """BlackSheep's application with the front door in front of it, and behind the door
    the routes answered before the router (``app.http.direct_routes``)."""

    front_door: FrontDoor | None = None

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.direct_routes = DirectRoutes(self)

    def open_front_door(self, boot, cookie_name: str) -> None:
        self.front_door = FrontDoor(
            self._behind_front_door,
            parse_trusted_proxies(boot["server.trusted_proxies"]),
            OwnHosts.of(boot["server.public_url"], boot["server.host"]), cookie_name)

    async def _behind_front_door(self, scope, receive, send):
        chain = self.direct_routes.chain_for(scope)
        if chain is None:
            return await Application.__call__(self, scope, receive, send)
        return await self.direct_routes.serve(chain, scope, receive, send)

    async def __call__(self, scope, receive, send):
        if self.front_door is None:
            return await self._behind_front_door(scope, receive, send)
        return await self.front_door(scope, receive, send)

    def direct_route(self, scope) -> tuple[Handler, Any] | None:
        """The chain of a direct route taking this request and the scope it is to see
        past the front door, or None: the request goes through the application (any
        other route, or a host name the front door refuses, which it answers)."""
        chain = self.direct_routes.chain_for(scope)
        if chain is None:
            return None
        if self.front_door is None:
            return chain, scope
        admitted = self.front_door.admitted(scope)
        return None if admitted is None else (chain, admitted)
