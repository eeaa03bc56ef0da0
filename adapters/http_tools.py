"""Calling the HTTP tools an administrator connected (``/api/admin/tools``).

What belongs here: one request to a tool's URL with the model's arguments — as the
JSON body, or as query parameters for GET and DELETE — the optional secret header,
a time limit, a cap on the response size, and reading the answer as JSON or text.
Every request passes the egress gate (``adapters.egress_http``), as notifications do.
Every failure is an ``HttpToolError`` whose message is safe to show the model: it
names what went wrong in words, never the secret, the full URL, the addresses a name
resolved to or the client library's own text.
"""

from __future__ import annotations

__all__ = ["HttpToolClient", "HttpToolError", "HttpToolRequest"]

import json
from collections.abc import Collection, Mapping
from dataclasses import field
from typing import Any

import aiohttp

from adapters.egress_http import EgressRefused, GatedClient, failure_words, refusal_words
from core.records import frozen

MAX_RESPONSE_BYTES = 256 * 1024
_BODYLESS = frozenset({"GET", "DELETE"})


class HttpToolError(Exception):
    """The tool could not be called or answered something unusable."""


@frozen
class HttpToolRequest:
    url: str
    method: str
    # What the model passed (the caller's words) and the tool's secret header stay
    # out of ``repr``, so out of logs.
    arguments: Mapping[str, Any] = field(repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: hosts the egress gate lets through although their addresses are not public
    allow_hosts: Collection[str] = ()


def _query(arguments: Mapping[str, Any]) -> dict[str, str]:
    """Arguments as query parameters: scalars as text, anything else as JSON."""
    query = {}
    for name, value in arguments.items():
        if isinstance(value, bool):
            query[name] = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            query[name] = str(value)
        elif value is not None:
            query[name] = json.dumps(value, separators=(",", ":"))
    return query


class HttpToolClient(GatedClient):
    """One session for every HTTP tool call of the process; ``aclose()`` at stop.

    The caller sets the overall time ceiling (the pipeline's tool policy);
    ``timeout_seconds`` here is the outer bound for any caller that does not.
    """

    def __init__(self, *, timeout_seconds: float = 60.0,
                 max_response_bytes: int = MAX_RESPONSE_BYTES) -> None:
        super().__init__(timeout_seconds=timeout_seconds)
        self.max_response_bytes = max_response_bytes

    async def call(self, request: HttpToolRequest) -> Any:
        """The decoded JSON answer (any JSON value) or the answer's text."""
        method = request.method.upper()
        options: dict[str, Any] = {"headers": {"Accept": "application/json, text/plain",
                                               **request.headers},
                                   "allow_redirects": False}
        if method in _BODYLESS:
            options["params"] = _query(request.arguments)
        else:
            options["json"] = dict(request.arguments)
        try:
            with self._through_gate(request.url, request.allow_hosts) as session:
                async with session.request(method, request.url, **options) as response:
                    body = await self._read_capped(response)
                    if response.status >= 300:
                        raise HttpToolError(f"it answered HTTP {response.status}")
                    return _decode(body, response.content_type)
        except EgressRefused as refused:
            raise HttpToolError(f"its address is not allowed ({refusal_words(refused)})") from None
        except TimeoutError:
            raise HttpToolError("it did not answer in time") from None
        except aiohttp.ClientError as exc:
            raise HttpToolError(f"it {failure_words(exc)}") from None

    async def _read_capped(self, response: aiohttp.ClientResponse) -> bytes:
        parts, size = [], 0
        while data := await response.content.read(65536):
            size += len(data)
            if size > self.max_response_bytes:
                raise HttpToolError(f"its answer is larger than {self.max_response_bytes} bytes")
            parts.append(data)
        return b"".join(parts)


def _decode(body: bytes, content_type: str) -> Any:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise HttpToolError("its answer is not text") from None
    if content_type == "application/json" or content_type.endswith("+json"):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            raise HttpToolError("its answer claims to be JSON but is not") from None
    return text
