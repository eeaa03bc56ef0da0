"""HTTP sessions whose every connection passes the egress gate (``core.egress``).

spec: telephony.md "Outward notifications" — "Every attempt passes the same egress
gate as other connectors". Used by outward notifications and by the administrators'
HTTP tools, so both refuse the same addresses.

How the gate is applied without a second lookup slipping past it: the URL is judged
as aiohttp's own parser (yarl) reads it, so a host written in fullwidth digits or with
ideographic full stops is judged as the address it becomes; the session's resolver
resolves a name once, hands every address to ``check_egress``, and gives aiohttp
exactly those addresses; and the socket of every connection is made by the gate,
which checks the address it is about to connect to — the last word, which no way of
writing a host can get around (aiohttp connects to an address literal without asking
the resolver). Connections are not kept alive, so each request is judged against the
allow list in force, and redirects are never followed (a redirect could point anywhere).

The allow list travels with the request (``allowing``), not with the session: one
session serves requests made under different lists.
"""

from __future__ import annotations

__all__ = ["EgressRefused", "GatedClient", "allowing", "client_url", "failure_words",
           "gated_session", "precheck", "refusal_words"]

import contextlib
import contextvars
import ipaddress
import logging
import socket
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import yarl
from aiohttp.abc import AbstractResolver, ResolveResult

from core.egress import EgressDecision, EgressReason, check_egress, reason_words

log = logging.getLogger("svc.egress")


@dataclass(slots=True)
class _Gate:
    """The allow list of the requests made inside one ``allowing`` block, and the
    addresses the resolver let through for them (a name on the allow list may resolve
    to an address the gate would refuse on its own)."""

    allow_hosts: tuple[str, ...] = ()
    cleared: set[str] = field(default_factory=set)


_GATE: contextvars.ContextVar[_Gate | None] = contextvars.ContextVar("egress_gate", default=None)


class EgressRefused(Exception):
    """The gate refused the request's host; ``decision`` says why."""

    def __init__(self, decision: EgressDecision) -> None:
        super().__init__(decision.detail or "refused by the egress gate")
        self.decision = decision


def refusal_words(refused: EgressRefused) -> str:
    """The gate's reason without the addresses a name resolved to: whoever reads it
    (a target's owner, a model) need not learn what names inside the network resolve to."""
    decision = refused.decision
    return (f"the egress gate refused {decision.host or 'the address'}: "
            f"{reason_words(decision.reason)}")


def failure_words(exc: aiohttp.ClientError) -> str:
    """What went wrong with a request, in words (no client-library text, no address);
    that text goes to the log."""
    log.warning("outward request failed", extra={"detail": f"{type(exc).__name__}: {exc}"})
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return "could not be reached (its name is unknown)"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return "could not be reached"
    if isinstance(exc, (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)):
        return "broke off before answering in full"
    return "answered something that could not be read"


@contextlib.contextmanager
def allowing(allow_hosts: Collection[str]) -> Iterator[None]:
    """Requests made inside this block are judged with ``allow_hosts``."""
    token = _GATE.set(_Gate(tuple(allow_hosts)))
    try:
        yield
    finally:
        _GATE.reset(token)


def _current_gate() -> _Gate:
    return _GATE.get() or _Gate()


def client_url(url: str) -> str:
    """``url`` as aiohttp will request it: its host as yarl reads it (compatibility
    characters folded, IDNA applied, an address literal in its usual form). Raises
    ``EgressRefused`` for a URL yarl cannot read."""
    try:
        return str(yarl.URL(url))
    except (ValueError, TypeError):
        raise EgressRefused(EgressDecision(False, None, EgressReason.BAD_URL,
                                           "the URL is not valid")) from None


def precheck(url: str, allow_hosts: Collection[str]) -> None:
    """Raise ``EgressRefused`` for what can be judged from the URL alone: its scheme,
    a forbidden name, an address literal — all as the client will read them. A host
    name still to be resolved passes here and is judged by the resolver."""
    decision = check_egress(client_url(url), (), allow_hosts)
    if not decision.allowed and decision.reason is not EgressReason.UNRESOLVED:
        raise EgressRefused(decision)


def _gated_socket(addr_info: tuple[Any, ...]) -> socket.socket:
    """The socket of one connection, made only for an address the gate allows: one
    the resolver cleared for this request, or one allowed on its own (a public
    address, or a literal on the allow list)."""
    family, type_, proto, _, sockaddr = addr_info
    address = str(sockaddr[0])
    gate = _current_gate()
    if address not in gate.cleared:
        literal = ipaddress.ip_address(address.partition("%")[0])
        written = f"[{literal}]" if literal.version == 6 else str(literal)
        decision = check_egress(f"http://{written}/", (), gate.allow_hosts)
        if not decision.allowed:
            raise EgressRefused(decision)
    return socket.socket(family=family, type=type_, proto=proto)


class GatedResolver(AbstractResolver):
    """Resolves once and lets aiohttp connect only to addresses the gate allowed."""

    def __init__(self, inner: AbstractResolver | None = None) -> None:
        self._inner = inner or aiohttp.ThreadedResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        gate = _current_gate()
        named = check_egress(f"http://{host}/", (), gate.allow_hosts)
        if not named.allowed and named.reason is not EgressReason.UNRESOLVED:
            raise EgressRefused(named)  # refused by name ("localhost."): never looked up
        results = await self._inner.resolve(host, port, family)
        addresses = [result["host"] for result in results]
        decision = check_egress(f"http://{host}/", addresses, gate.allow_hosts)
        if not decision.allowed:
            raise EgressRefused(decision)
        gate.cleared.update(addresses)
        return results

    async def close(self) -> None:
        await self._inner.close()


def gated_session(*, timeout_seconds: float, resolver: AbstractResolver | None = None,
                  **options: Any) -> aiohttp.ClientSession:
    """A client session behind the gate (make it inside the running event loop).
    Call ``precheck`` before each request and make the request inside ``allowing``.
    ``resolver`` replaces the system's name lookup (the gate still judges its answer)."""
    connector = aiohttp.TCPConnector(resolver=GatedResolver(resolver), use_dns_cache=False,
                                     force_close=True, socket_factory=_gated_socket)
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

    @contextlib.contextmanager
    def _through_gate(self, url: str,
                      allow_hosts: Collection[str]) -> Iterator[aiohttp.ClientSession]:
        """The session, for requests to ``url`` made inside the block and judged with
        ``allow_hosts``; raises ``EgressRefused`` for what the URL alone shows."""
        precheck(url, allow_hosts)
        with allowing(allow_hosts):
            yield self._get_session()
