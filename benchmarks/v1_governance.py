"""What each governance step of a ``/v1`` passthrough request costs, one at a time.

In one process, no sockets, no database: the services as a busy server holds them once
warm — the key's identity kept (``IdentityCache``), the settings' overrides and the
model's resolution cached, a lease of permits held for the key, the usage writer busy —
and each step of ``app.routes.v1.chat_completions`` and ``app.public_api.passthrough``
called on its own in a loop: the key (``api_caller``), the body decoded and read as a
chat request (``parse_json``, ``read_chat_request``), the model (``resolve``), the limit
(``admit``: the setting, the lease, the headers), the usage record (``_Meter.record``),
the response (``encoded_json_response`` with the rate-limit headers); then all of them
in a row. Printed: CPU microseconds per call (``time.thread_time``), the median of
``--rounds`` rounds, less an empty coroutine's await. The upstream call, the serving
and the middlewares are left out (``benchmarks.v1_dispatch`` measures the latter).

To compare two trees, run it with ``PYTHONPATH`` set to each in turn, interleaved.

Run: ``.venv/bin/python -m benchmarks.v1_governance [--calls N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import uuid
from types import SimpleNamespace
from typing import Any, Awaitable, Callable

from blacksheep import Request

from app.config import BootConfig
from app.http.bodies import parse_json
from app.http.errors import encoded_json_response
from app.public_api import auth, passthrough
from app.services.accounts import Identity
from app.services.api_keys import ApiKeys, fingerprint
from app.services.identity_cache import IdentityCache
from app.services.providers import Providers, ResolvedModel
from app.services.settings import Settings
from app.services.usage import Usage
from core import ratelimit
from core.chat_request import read_chat_request
from benchmarks._rounds import cpu_us_per_call

BODY = b'{"model":"fake-small","messages":[{"role":"user","content":"Tell me about foxes."}]}'
KEY = "sk-svc-" + "x" * 43
LIMIT = 1_000_000_000  # never reached: every call spends a permit of the lease
FOREVER = 1e9


def warm_services() -> tuple[SimpleNamespace, Identity, ResolvedModel]:
    """The services a request meets on a busy server, built without a database (their
    caches filled by hand, as the first requests would have filled them)."""
    identity = Identity(uuid.uuid4(), "bench@example.org", "user", frozenset(),
                        api_key_id=uuid.uuid4())
    known: IdentityCache[Identity] = IdentityCache(max_age=FOREVER)
    known.vouch(FOREVER)
    known.put(fingerprint(KEY), identity, None, known.generation)
    keys = ApiKeys.__new__(ApiKeys)  # its notices and audit are not needed on a hit
    keys._known, keys._claiming, keys.clock = known, {}, time.time
    keys._leases = {identity.api_key_id: ratelimit.Lease(
        round(time.time() * 1e6), LIMIT, 10**18, ratelimit.interval(LIMIT))}
    boot = BootConfig({"api.rate_per_min": LIMIT})
    settings = Settings(boot, None, None, cache_seconds=FOREVER)  # type: ignore[arg-type]
    settings._cached = (time.monotonic(), {})
    resolved = ResolvedModel("fake-small", "fake", None)
    providers = Providers.__new__(Providers)  # a hit needs only the cache
    providers.cache_seconds, providers._refreshing = FOREVER, set()
    providers._resolved = {("fake-small", identity.account_id): (time.monotonic(), resolved)}
    usage = Usage()
    usage._writer = asyncio.get_running_loop().create_future()  # a writer still running
    svc = SimpleNamespace(api_keys=keys, settings=settings, providers=providers, usage=usage)
    return svc, identity, resolved


def steps() -> dict[str, Callable[[], Awaitable[Any]]]:
    svc, identity, resolved = warm_services()
    request = Request("POST", b"/v1/chat/completions", [
        (b"authorization", f"Bearer {KEY}".encode()), (b"content-type", b"application/json")])
    headers = ratelimit.headers(ratelimit.admitted(0, 0, 1000))

    async def key() -> None:
        await auth.api_caller(request, svc)  # type: ignore[arg-type]

    async def body() -> None:
        read_chat_request(parse_json(BODY))

    async def model() -> None:
        await svc.providers.resolve("fake-small", identity.account_id)

    async def limit() -> None:
        await auth.admit(svc, identity)  # type: ignore[arg-type]

    async def usage() -> None:
        meter = passthrough._Meter(svc, identity, resolved,  # type: ignore[arg-type]
                                   time.monotonic())
        meter.outcome, meter.usage = "ok", {"prompt_tokens": 12, "completion_tokens": 40}
        meter.record()
        svc.usage._buffer.clear()

    async def response() -> None:
        encoded_json_response(200, b'{"object":"chat.completion"}', headers)

    async def every_step() -> None:
        for step in parts:
            await step()

    parts = (key, body, model, limit, usage, response)
    return {"all": every_step, **{step.__name__: step for step in parts}}


async def measure(calls: int, rounds: int) -> dict[str, list[float]]:
    async def nothing() -> None:
        pass

    return await cpu_us_per_call({"(empty)": nothing, **steps()}, calls, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.calls, args.rounds))
    empty = statistics.median(figures.pop("(empty)"))
    print(f"CPU µs per call, median of {args.rounds} rounds of {args.calls}, less an empty "
          f"await ({empty:.2f}) (load average {os.getloadavg()[0]:.1f}):")
    for name, values in figures.items():
        print(f"  {name:<9} {statistics.median(values) - empty:6.2f}")


if __name__ == "__main__":
    main()
