"""Routes answered before BlackSheep's router (``app.http.direct_routes``): the same
middlewares in the same order, the application's error handlers, and the router for
everything the direct route does not take exactly."""

from __future__ import annotations

import pytest
import json

from blacksheep import Request, Response, Router

from app.errors import Forbidden
from app.http.direct_routes import chained
from app.http.errors import configure_errors, json_response
from app.http.front_door import FrontDoorApplication

pytestmark = pytest.mark.anyio


def _recording(seen: list[str], name: str):
    async def middleware(request: Request, handler) -> Response:
        seen.append(f"{name} in")
        response = await handler(request)
        seen.append(f"{name} out")
        response.headers[f"x-{name}".encode()] = b"1"
        return response

    return middleware


async def test_a_chain_runs_each_middleware_once_in_order_around_the_handler():
    seen: list[str] = []

    async def handler(request: Request) -> Response:
        seen.append("handler")
        return Response(204)

    chain = chained([_recording(seen, "outer"), _recording(seen, "inner")], handler)
    response = await chain(Request("POST", b"/", None))
    assert seen == ["outer in", "inner in", "handler", "inner out", "outer out"]
    assert response.get_first_header(b"x-outer") == b"1"


async def _app(seen: list[str]) -> FrontDoorApplication:
    router = Router()
    app = FrontDoorApplication(router=router)
    configure_errors(app)
    app.middlewares.append(_recording(seen, "first"))
    app.middlewares.append(_recording(seen, "second"))

    async def by_router(request: Request) -> Response:
        seen.append("router")
        return json_response(200, {"by": "router"})

    async def direct(request: Request) -> Response:
        seen.append("direct")
        if request.query.get("refuse"):
            raise Forbidden("Not this one.", code="refused")
        return json_response(200, {"by": "direct", "body": (await request.json())})

    router.add_post("/v1/chat/completions", by_router)
    router.add_get("/v1/chat/completions", by_router)
    app.direct_routes.add("POST", "/v1/chat/completions", direct)
    await app.start()
    return app


async def _asgi(app, method: str, path: str, query: bytes = b"") -> tuple[int, dict, dict]:
    """One request through the application's ASGI entry, as a server calls it."""
    body = json.dumps({"model": "m"}).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": query, "root_path": "", "client": ("127.0.0.1", 5000),
             "server": ("127.0.0.1", 80), "headers": [
                 (b"host", b"localhost"), (b"content-type", b"application/json"),
                 (b"content-length", str(len(body)).encode())]}
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    await app(scope, receive, send)
    head = dict(sent[0]["headers"])
    return sent[0]["status"], head, json.loads(b"".join(m.get("body", b"") for m in sent[1:]))


async def test_the_exact_method_and_path_skip_the_router_but_not_the_middlewares():
    seen: list[str] = []
    status, headers, body = await _asgi(await _app(seen), "POST", "/v1/chat/completions")
    assert (status, body) == (200, {"by": "direct", "body": {"model": "m"}})
    assert seen == ["first in", "second in", "direct", "second out", "first out"]
    assert headers[b"x-first"] == b"1"


async def test_a_refusal_on_a_direct_route_is_rendered_by_the_application():
    seen: list[str] = []
    status, _, body = await _asgi(await _app(seen), "POST", "/v1/chat/completions",
                                  b"refuse=1")
    assert (status, body["error"]["code"]) == (403, "refused")
    assert seen == ["first in", "second in", "direct"]  # raised through the middlewares


@pytest.mark.parametrize("method, path", [("GET", "/v1/chat/completions"),
                                          ("POST", "/v1/chat/completions/")])
async def test_anything_else_goes_to_the_router(method, path):
    seen: list[str] = []
    _, _, body = await _asgi(await _app(seen), method, path)
    assert body == {"by": "router"}
    assert seen == ["first in", "second in", "router", "second out", "first out"]


async def test_chat_completions_of_the_service_take_the_direct_route(services):
    from app.main import create_app

    app = create_app(services, own_pool=False, scheduled_jobs=False)
    await app.start()
    try:
        scope = {"type": "http", "method": "POST", "raw_path": b"/v1/chat/completions",
                 "root_path": ""}
        assert app.direct_routes.chain_for(scope) is not None
        assert app.direct_routes.chain_for({**scope, "method": "GET"}) is None
    finally:
        await app.stop()
