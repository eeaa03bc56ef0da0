"""Asking an address's ``/healthz`` through the network, as a carrier would.

The readiness check wants to know whether the public address really leads here: DNS,
the reverse proxy, its certificate and the port all lie between. One GET with a short
timeout, the system's certificate authorities, no redirects followed (a carrier does
not follow them for a webhook either). What answered is described in plain words: the
status, the ``Server`` it named (the proxy, a CDN), and whether the body is svc's own
health answer — a catch-all page answering 200 is not this deployment.
"""

from __future__ import annotations

__all__ = ["HealthAnswer", "probe_health"]

import asyncio
import json
import socket
import ssl

import aiohttp
from yarl import URL

from core.records import frozen

TIMEOUT_SECONDS = 5.0
#: svc's /healthz answer is a few dozen bytes; more than this is someone else's page.
MAX_BODY = 4096
_DNS_ERROR = getattr(aiohttp, "ClientConnectorDNSError", ())  # aiohttp 3.10.6 and later


@frozen
class HealthAnswer:
    #: the HTTP status, or None when nothing answered
    status: int | None
    #: why nothing answered, in words a person can act on
    failure: str | None = None
    #: the ``Server`` header of what answered (``nginx``, a CDN's name), if it gave one
    server: str | None = None
    #: whether the body is svc's health answer (``{"status": ..., "database": ...}``)
    from_svc: bool = False


def _is_svc_health(body: bytes) -> bool:
    try:
        found = json.loads(body)
    except ValueError:
        return False
    return isinstance(found, dict) and {"status", "database"} <= found.keys()


def _failure(exc: BaseException, host: str) -> str:
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return f"the certificate of {host} is not trusted ({exc.certificate_error})"
    if isinstance(exc, (aiohttp.ClientSSLError, ssl.SSLError)):
        return f"the TLS handshake with {host} failed ({exc})"
    if isinstance(exc, _DNS_ERROR) or (isinstance(exc, aiohttp.ClientConnectorError)
                                       and isinstance(exc.os_error, socket.gaierror)):
        return f"the name {host} does not resolve"
    if isinstance(exc, aiohttp.ClientConnectorError):
        cause = exc.os_error
        if isinstance(cause, ConnectionRefusedError):
            return f"{host} refused the connection (nothing listens on that port)"
        return f"no connection to {host} ({cause.strerror or cause})"
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return f"nothing answered within {TIMEOUT_SECONDS:g} seconds"
    return f"the request failed ({exc.__class__.__name__}: {exc})"


async def probe_health(url: str, *, ssl_context: ssl.SSLContext | None = None,
                       timeout: float = TIMEOUT_SECONDS) -> HealthAnswer:
    """GET ``url`` once; its status and who answered, or why nothing answered."""
    host = URL(url).host or url
    limits = aiohttp.ClientTimeout(total=timeout)
    connector = aiohttp.TCPConnector(ssl=ssl_context if ssl_context is not None else True,
                                     force_close=True)
    try:
        async with aiohttp.ClientSession(timeout=limits, connector=connector) as http:
            async with http.get(url, allow_redirects=False) as answer:
                body = await answer.content.read(MAX_BODY)
                return HealthAnswer(answer.status, server=answer.headers.get("Server"),
                                    from_svc=_is_svc_health(body))
    except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
        return HealthAnswer(None, _failure(exc, host))
