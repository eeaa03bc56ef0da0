"""HTTP sessions whose every connection passes the egress gate (``core.egress``).

spec: telephony.md "Outward notifications" — "Every attempt passes the same egress
gate as other connectors". Used by outward notifications and by the administrators'
HTTP tools, so both refuse the same addresses.

How the gate is applied without a second lookup slipping past it: the session's
resolver resolves the host name once, hands every address to ``check_egress``, and
gives aiohttp exactly those addresses to connect to; an address written in the URL
itself (which aiohttp never resolves) is checked before the request. Connections are
not kept alive, so each request is judged against the allow list in force, and
redirects are never followed (a redirect could point anywhere).

The allow list travels with the request (``allowing``), not with the session: one
session serves requests made under different lists.
"""

from __future__ import annotations

import contextlib
import contextvars
import socket
from collections.abc import Collection, Iterator
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from core.egress import EgressDecision, EgressReason, check_egress

__all__ = ["EgressRefused", "GatedClient", "allowing", "gated_session", "precheck"]

_ALLOW_HOSTS: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "egress_allow_hosts", default=())


class EgressRefused(Exception):
    """The gate refused the request's host; ``decision`` says why."""

    def __init__(self, decision: EgressDecision) -> None:
        super().__init__(decision.detail or "refused by the egress gate")
        self.decision = decision


@contextlib.contextmanager
def allowing(allow_hosts: Collection[str]) -> Iterator[None]:
    """Requests made inside this block are judged with ``allow_hosts``."""
    token = _ALLOW_HOSTS.set(tuple(allow_hosts))
    try:
        yield
    finally:
        _ALLOW_HOSTS.reset(token)


def precheck(url: str, allow_hosts: Collection[str]) -> None:
    """Raise ``EgressRefused`` for what can be judged from the URL alone: its scheme,
    a forbidden name, an address literal. A host name still to be resolved passes
    here and is judged by the resolver."""
    decision = check_egress(url, (), allow_hosts)
    if not decision.allowed and decision.reason is not EgressReason.UNRESOLVED:
        raise EgressRefused(decision)


class GatedResolver(AbstractResolver):
    """Resolves once and lets aiohttp connect only to addresses the gate allowed."""

    def __init__(self, inner: AbstractResolver | None = None) -> None:
        self._inner = inner or aiohttp.ThreadedResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        decision = check_egress(f"http://{host}/", [result["host"] for result in results],
                                _ALLOW_HOSTS.get())
        if not decision.allowed:
            raise EgressRefused(decision)
        return results

    async def close(self) -> None:
        await self._inner.close()


def gated_session(*, timeout_seconds: float, resolver: AbstractResolver | None = None,
                  **options: Any) -> aiohttp.ClientSession:
    """A client session behind the gate (make it inside the running event loop).
    Call ``precheck`` before each request and make the request inside ``allowing``.
    ``resolver`` replaces the system's name lookup (the gate still judges its answer)."""
    connector = aiohttp.TCPConnector(resolver=GatedResolver(resolver), use_dns_cache=False,
                                     force_close=True)
    return aiohttp.ClientSession(connector=connector, trust_env=False,
                                 timeout=aiohttp.ClientTimeout(total=timeout_seconds),
                                 **options)


class GatedClient:
    """Base of a process-wide client holding one gated session; ``aclose()`` at stop.
    ``resolver`` replaces the system's name lookup (the gate still judges it)."""

    def __init__(self, *, timeout_seconds: float,
                 resolver: AbstractResolver | None = None) -> None:
        self.timeout_seconds = timeout_seconds
        self._resolver = resolver
        self._session: aiohttp.ClientSession | None = None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None:  # made on first use, so it binds to the running loop
            self._session = gated_session(timeout_seconds=self.timeout_seconds,
                                          resolver=self._resolver)
        return self._session
