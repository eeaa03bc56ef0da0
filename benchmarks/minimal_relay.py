"""The floor ``/v1`` passthrough is measured against: a bare BlackSheep relay.

One route, ``POST /v1/chat/completions``: read the body, send it to the upstream with
one pooled client, answer its JSON or relay its stream bytes as they come. No key
check, no limit, no usage, no error mapping — what any relay must do at the least.
The client is aiohttp's (what the service ships) or httpx (for the comparison the
issue quotes). Served like ``svc serve``: uvicorn, httptools, uvloop.

With ``--processes N`` it forks N processes on the one socket, by the supervisor
``svc serve --workers N`` uses (``app.supervisor``): the relay's side of a comparison
with svc's workers.

Run: ``python -m benchmarks.minimal_relay --upstream http://127.0.0.1:P/v1 --port Q
[--client httpx] [--processes N]``; it prints ``listening on Q`` once every process
serves.
"""

from __future__ import annotations

import argparse
import socket

import aiohttp
import httpx
import uvicorn
from blacksheep import Application, Content, Request, Response, StreamedContent

SSE, JSON = b"text/event-stream", b"application/json"


def aiohttp_relay(upstream: str):
    session: aiohttp.ClientSession | None = None

    async def relay(request: Request) -> Response:
        nonlocal session
        if session is None:
            session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256))
        body = await request.read()
        stream = b'"stream":true' in body.replace(b" ", b"")
        response = await session.post(f"{upstream}/chat/completions", data=body, headers={
            "Content-Type": "application/json", "Authorization": "Bearer sk-bench"})
        if not stream:
            data = await response.read()
            return Response(response.status, None, Content(JSON, data))

        async def chunks():
            try:
                async for data in response.content.iter_any():
                    yield data
            finally:
                response.release()

        return Response(200, None, StreamedContent(SSE, chunks))

    return relay


def httpx_relay(upstream: str):
    client = httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=256,
                                                               max_keepalive_connections=256))

    async def relay(request: Request) -> Response:
        body = await request.read()
        stream = b'"stream":true' in body.replace(b" ", b"")
        outgoing = client.build_request("POST", f"{upstream}/chat/completions", content=body,
                                        headers={"Content-Type": "application/json",
                                                 "Authorization": "Bearer sk-bench"})
        response = await client.send(outgoing, stream=stream)
        if not stream:
            return Response(response.status_code, None, Content(JSON, response.content))

        async def chunks():
            try:
                async for data in response.aiter_raw():
                    yield data
            finally:
                await response.aclose()

        return Response(200, None, StreamedContent(SSE, chunks))

    return relay


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--client", choices=("aiohttp", "httpx"), default="aiohttp")
    parser.add_argument("--processes", type=int, default=1)
    args = parser.parse_args()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]

    def serve(ready) -> None:
        app = Application()
        make = aiohttp_relay if args.client == "aiohttp" else httpx_relay
        app.router.add_post("/v1/chat/completions", make(args.upstream))
        server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False,
                                               http="httptools", loop="uvloop",
                                               lifespan="on"))

        async def announce(_: Application) -> None:
            ready()

        app.after_start += announce
        server.run(sockets=[sock])

    def listening() -> None:
        print(f"listening on {port}", flush=True)

    if args.processes == 1:
        serve(listening)
        return
    from app.supervisor import Supervisor

    def work(index: int) -> int:
        serve(supervisor.ready)
        return 0

    sock.listen(2048)  # before the fork: every process accepts on the one queue
    supervisor = Supervisor(args.processes, work, on_ready=listening)
    supervisor.run()


if __name__ == "__main__":
    main()
