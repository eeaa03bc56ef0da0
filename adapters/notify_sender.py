"""Posting one outward notification: one attempt, through the egress gate.

spec: telephony.md "Outward notifications". The body and headers come ready from
``core.notifications.build_request``; this module only sends them and says what came
of it. A 2xx answer delivers; any other answer, a timeout or a refused connection
fails (``core.notifications.is_retryable`` decides whether to try again); the gate's
refusal is its own result and is never retried. The detail of a result names what
went wrong but never the URL, which is a secret of its owner, nor the addresses a
name resolved to.
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from dataclasses import dataclass

import aiohttp
from aiohttp.abc import AbstractResolver

from adapters.egress_http import EgressRefused, GatedClient, allowing, precheck
from core.notifications import OutgoingRequest

__all__ = ["NotificationSender", "PostResult", "Result"]

#: Answers are read only to free the connection; nothing in them is used.
_MAX_ANSWER_BYTES = 64 * 1024


class Result(enum.Enum):
    DELIVERED = "delivered"
    FAILED = "failed"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class PostResult:
    result: Result
    status: int | None
    detail: str


def _refusal(refused: EgressRefused) -> str:
    """The gate's reason without the addresses the name resolved to: a target's owner
    sees it, and need not learn what names inside the network resolve to."""
    decision = refused.decision
    reason = decision.reason.value.replace("_", " ") if decision.reason else "refused"
    return f"the egress gate refused {decision.host or 'the address'}: {reason}"


class NotificationSender(GatedClient):
    """One session for every notification of the process; ``aclose()`` at stop."""

    def __init__(self, *, timeout_seconds: float = 10.0,
                 resolver: AbstractResolver | None = None) -> None:
        super().__init__(timeout_seconds=timeout_seconds, resolver=resolver)

    async def post(self, url: str, request: OutgoingRequest,
                   allow_hosts: Collection[str]) -> PostResult:
        try:
            precheck(url, allow_hosts)
            with allowing(allow_hosts):
                async with self._get_session().post(
                        url, data=request.body, headers=dict(request.headers),
                        allow_redirects=False) as response:
                    await response.content.read(_MAX_ANSWER_BYTES)
                    status = response.status
        except EgressRefused as refused:
            return PostResult(Result.REFUSED, None, _refusal(refused))
        except TimeoutError:
            return PostResult(Result.FAILED, None, "no answer in time")
        except aiohttp.ClientError as exc:
            return PostResult(Result.FAILED, None, f"could not be reached ({type(exc).__name__})")
        if 200 <= status < 300:
            return PostResult(Result.DELIVERED, status, f"answered HTTP {status}")
        return PostResult(Result.FAILED, status, f"answered HTTP {status}")
