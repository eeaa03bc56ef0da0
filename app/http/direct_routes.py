"""The busiest routes answered in front of BlackSheep's router, through the same middlewares.

``POST /v1/chat/completions`` is most of what a busy server answers, and with the model
call itself its cost is mostly Python frames: BlackSheep's route match, a wrapper
coroutine per middleware, and two more around the handler to inject its services. Each
is small, but every time the request waits (the body, the upstream, each relayed read)
and resumes, every coroutine frame between the server and the wait is entered again.

``DirectRoutes`` takes such a request before the router: the application's own
middlewares, in their order, each called straight with the next one (a plain function
call hands over its coroutine, no wrapper of our own is awaited), and a handler whose
services are bound once. Errors are rendered by the application's handlers as on any
route. Only the exact method and path are taken: anything else (another method, a
trailing slash, letters in another case, a path under a ``root_path``) goes to the
router, which answers it as it always has.
"""

from __future__ import annotations

import functools
from typing import Any, Awaitable, Callable

from blacksheep import Application, Request, Response
from blacksheep.scribe import send_asgi_response

Handler = Callable[[Request], Awaitable[Response]]
Middleware = Callable[[Request, Handler], Awaitable[Response]]


def _hand_over(middleware: Middleware, following: Handler, request: Request
               ) -> Awaitable[Response]:
    return middleware(request, following)


def chained(middlewares: list[Middleware], handler: Handler) -> Handler:
    """``handler`` behind ``middlewares``, the first outermost, as BlackSheep chains
    them for its routes, but with no coroutine of its own between two of them."""
    for middleware in reversed(middlewares):
        handler = functools.partial(_hand_over, middleware, handler)
    return handler


class DirectRoutes:
    """Exact ``(method, raw path)`` pairs served without the router. The chain of each
    is made as the application has started, when its middlewares are final; until then
    (and for a server that never runs the lifespan) the router answers them."""

    def __init__(self, app: Application) -> None:
        self.app = app
        self._handlers: dict[tuple[str, bytes], Handler] = {}
        self._chains: dict[tuple[str, bytes], Handler] = {}
        app.after_start += self._make_chains

    def add(self, method: str, path: str, handler: Handler) -> None:
        self._handlers[(method, path.encode())] = handler

    async def _make_chains(self, app: Application) -> None:
        middlewares = list(app.middlewares)
        self._chains = {key: chained(middlewares, handler)
                        for key, handler in self._handlers.items()}

    def chain_for(self, scope: dict[str, Any]) -> Handler | None:
        """The chain serving this request, or None: the router's to answer."""
        if scope["type"] != "http" or scope.get("root_path"):
            return None
        return self._chains.get((scope["method"], scope.get("raw_path")))  # type: ignore[arg-type]

    async def answer(self, chain: Handler, request: Request) -> Response:
        """The response of ``chain``, an error rendered by the application's handlers
        as BlackSheep's own request handling renders it for a matched route."""
        try:
            response = await chain(request)
        except Exception as exc:
            response = await self.app.handle_request_handler_exception(request, exc)
        return response or Response(204)

    async def serve(self, chain: Handler, scope: dict[str, Any], receive, send) -> None:
        """A matched request served through ASGI (under a server other than ``svc
        serve``'s, which writes the response itself: ``app.http.direct_answers``)."""
        request = self.app.instantiate_request(scope, receive)
        try:
            await send_asgi_response(await self.answer(chain, request), send)
        finally:
            forget(request)


def forget(request: Request) -> None:
    """Let go of what a served request holds, as BlackSheep does after each one."""
    request.scope = None  # type: ignore[assignment]
    request.dispose()
