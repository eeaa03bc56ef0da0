"""Per-request plumbing: the request id and the access log line.

A request id arriving in ``x-request-id`` is kept when it is short and plain (so a
proxy's id follows the request through); otherwise a new one is made: 32 hex digits,
a random half drawn once per process and a counter (unique without asking the
operating system for randomness on every request, which ``uuid4`` does). It is sent back
on every response, and the JSON log line of the request carries it, as does every
other line logged while it is served (``app.log_format.current_request_id``).
"""

from __future__ import annotations

import functools
import itertools
import logging
import re
import secrets
import time

from blacksheep import Request, Response

from app.log_format import FixedRecords, current_request_id

access_log = logging.getLogger("svc.access")
_access_lines = FixedRecords(access_log, logging.INFO, "request")
# The same few accounts call again and again; their id's text is made once.
_account_text = functools.lru_cache(maxsize=4096)(str)
_PLAIN_ID = re.compile(rb"^[A-Za-z0-9._-]{1,64}$")
_ID_PREFIX = secrets.token_hex(8)
_id_numbers = itertools.count()


def request_id_of(request: Request) -> str:
    given = request.get_first_header(b"x-request-id")
    if given and _PLAIN_ID.match(given):
        return given.decode()
    return f"{_ID_PREFIX}{next(_id_numbers):016x}"


def arrived_at(request: Request) -> float:
    """When the request reached this server, on ``time.monotonic``: where usage latency
    counts from, so it is the caller's whole wait and not only the model's."""
    return getattr(request, "arrived_at", None) or time.monotonic()


class RequestContext:
    """Outermost middleware: request id, error rendering inside it, and the access log."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, request: Request, handler) -> Response:
        started = time.perf_counter()
        request.arrived_at = time.monotonic()  # type: ignore[attr-defined]
        request_id = request_id_of(request)
        request.request_id = request_id  # type: ignore[attr-defined]
        # Not reset on the way out: a streamed body is written after this returns, in
        # the same task (each request has its own), and its lines need the id too.
        current_request_id.set(request_id)
        response: Response | None = None
        try:
            response = await handler(request)
        except Exception as exc:  # rendered here so the error carries the request id too
            response = await self.app.handle_request_handler_exception(request, exc)
        finally:
            status = response.status if response is not None else 499
            identity = getattr(request, "caller", None)
            _access_lines.log({
                "request_id": request_id,
                "method": request.method,
                "path": request.url.path.decode("latin-1"),
                "status": status,
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                "account_id": _account_text(identity.account_id) if identity else None,
                "client": request.client_ip,
            })
        response.headers[b"x-request-id"] = request_id.encode()
        return response
