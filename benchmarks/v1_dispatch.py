"""What reaching the chat-completions handler costs, through the router or the direct route.

In one process, no sockets: a ``POST /v1/chat/completions`` handed to the application's
ASGI entry as uvicorn hands it, through svc's own four middlewares (request id and
access line, query check, same-origin check, the public API's gate) to a handler that
reads the body and answers a small JSON. Measured both ways the application can take
it: BlackSheep's router (a wrapper coroutine per middleware, the services injected per
request) and ``app.http.direct_routes`` (the middlewares called straight, the services
bound once). Printed: CPU microseconds per request (``time.thread_time``), the median
of ``--rounds`` rounds, the two ways interleaved. Everything else a request costs (the
socket, the key, the limit, the upstream call) is the same either way and left out.

Run: ``.venv/bin/python -m benchmarks.v1_dispatch [--requests N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import statistics
from collections.abc import Awaitable, Callable
from types import SimpleNamespace

from blacksheep import Request, Response, Router

from app.http.errors import configure_errors, encoded_json_response
from app.http.front_door import FrontDoorApplication
from app.http.middleware import RequestContext
from app.http.query_values import UsableQuery
from app.http.same_origin import SameOriginWrites
from app.log_format import configure_logging
from app.public_api.gate import PublicApiGate
from benchmarks._rounds import cpu_us_per_call

BODY = b'{"model":"fake-small","messages":[{"role":"user","content":"Tell me about foxes."}]}'
SCOPE = {
    "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
    "scheme": "http", "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions",
    "query_string": b"", "root_path": "", "client": ("127.0.0.1", 50000),
    "server": ("127.0.0.1", 8000), "headers": [
        (b"host", b"127.0.0.1:8000"), (b"authorization", b"Bearer sk-svc-bench"),
        (b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]}


_DISCARDED = None


class Settings:
    """What the gate reads: the public API on, no CORS."""

    async def snapshot(self) -> dict[str, bool]:
        return {"features.public_api": True, "api.cors_allow_all": False}


class Services(SimpleNamespace):
    """Stands for ``app.bundle.Services``: the type the handler asks to be injected."""


async def handler(request: Request, svc: Services) -> Response:
    await request.read()
    return encoded_json_response(200, b'{"object":"chat.completion"}',
                                 {"x-ratelimit-limit-requests": "1000"})


def application(direct: bool) -> FrontDoorApplication:
    services = Services(settings=Settings())
    router = Router()
    app = FrontDoorApplication(router=router)
    app.services.add_instance(services, Services)
    configure_errors(app)
    app.middlewares.append(RequestContext(app))
    app.middlewares.append(UsableQuery())
    app.middlewares.append(SameOriginWrites("http://127.0.0.1:8000"))
    app.middlewares.append(PublicApiGate(app, services))  # type: ignore[arg-type]
    router.add_post("/v1/chat/completions", handler)
    if direct:
        app.direct_routes.add("POST", "/v1/chat/completions",
                              functools.partial(handler, svc=services))
    return app


async def _receive() -> dict:
    return {"type": "http.request", "body": BODY, "more_body": False}


async def _send(message: dict) -> None:
    pass


async def measure(requests: int, rounds: int) -> dict[str, list[float]]:
    apps = {"router": application(False), "direct route": application(True)}
    for app in apps.values():
        await app.start()
    def request(app: FrontDoorApplication) -> Callable[[], Awaitable[None]]:
        return lambda: app(dict(SCOPE), _receive, _send)

    return await cpu_us_per_call({name: request(app) for name, app in apps.items()},
                                 requests, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000, help="requests per round")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    # The access line is formatted and written, to nowhere; the file is left open (the
    # log's flushing thread writes to it until the process ends).
    global _DISCARDED
    _DISCARDED = open(os.devnull, "w")  # noqa: SIM115
    configure_logging("info", _DISCARDED)
    figures = asyncio.run(measure(args.requests, args.rounds))
    print(f"CPU µs per request, median of {args.rounds} rounds of {args.requests} "
          f"(load average {os.getloadavg()[0]:.1f}):")
    for name, values in figures.items():
        print(f"  {name:<13} {statistics.median(values):6.1f}  "
              f"(all: {', '.join(f'{v:.1f}' for v in sorted(values))})")


if __name__ == "__main__":
    main()
