"""Posting one outward notification: one attempt, through the egress gate.

spec: telephony.md "Outward notifications". The body and headers come ready from
``core.notifications.build_request``; this module only sends them and says what came
of it. A 2xx answer delivers; any other answer, a timeout or a refused connection
fails (``core.notifications.is_retryable`` decides whether to try again); the gate's
refusal is its own result and is never retried. The detail of a result names what
went wrong, in words, but never the URL, which is a secret of its owner, nor the
addresses a name resolved to, nor the client library's own text.
"""

from __future__ import annotations

__all__ = ["NotificationSender", "PostResult", "Result"]

import enum
from collections.abc import Collection

import aiohttp
from aiohttp.abc import AbstractResolver

from adapters.egress_http import EgressRefused, GatedClient, failure_words, refusal_words
from core.notifications import OutgoingRequest
from core.records import frozen

#: Answers are read only to free the connection; nothing in them is used.
_MAX_ANSWER_BYTES = 64 * 1024


class Result(enum.Enum):
    DELIVERED = "delivered"
    FAILED = "failed"
    REFUSED = "refused"


@frozen
class PostResult:
    result: Result
    status: int | None
    detail: str


class NotificationSender(GatedClient):
    """One session for every notification of the process; ``aclose()`` at stop."""

    def __init__(self, *, timeout_seconds: float = 10.0,
                 resolver: AbstractResolver | None = None) -> None:
        super().__init__(timeout_seconds=timeout_seconds, resolver=resolver)

    async def post(self, url: str, request: OutgoingRequest,
                   allow_hosts: Collection[str]) -> PostResult:
        try:
            with self._through_gate(url, allow_hosts) as session:
                async with session.post(url, data=request.body, headers=dict(request.headers),
                                        allow_redirects=False) as response:
                    await response.content.read(_MAX_ANSWER_BYTES)
                    status = response.status
        except EgressRefused as refused:
            return PostResult(Result.REFUSED, None, refusal_words(refused))
        except TimeoutError:
            return PostResult(Result.FAILED, None, "no answer in time")
        except aiohttp.ClientError as exc:
            return PostResult(Result.FAILED, None, failure_words(exc))
        if 200 <= status < 300:
            return PostResult(Result.DELIVERED, status, f"answered HTTP {status}")
        return PostResult(Result.FAILED, status, f"answered HTTP {status}")
