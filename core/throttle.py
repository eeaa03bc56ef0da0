"""Slowing down password guessing: how long a sign-in must wait after failures.

Pure rule, fed the failures the database counted in the window. The first few
mistakes cost nothing (people mistype); after that each further failure doubles the
wait, up to a ceiling, per account and per source address separately.
"""

from __future__ import annotations

__all__ = ["ThrottlePolicy", "ACCOUNT_POLICY", "ADDRESS_POLICY", "seconds_to_wait"]

from .records import frozen


@frozen
class ThrottlePolicy:
    free_failures: int  #: failures in the window that cost nothing
    window_seconds: int  #: how far back failures count
    first_wait_seconds: float  #: wait after the first failure beyond the free ones
    max_wait_seconds: float  #: ceiling of the doubling wait


ACCOUNT_POLICY = ThrottlePolicy(free_failures=5, window_seconds=900, first_wait_seconds=1.0,
                                max_wait_seconds=900.0)
# An address may sit in front of many people (an office), so it gets more slack.
ADDRESS_POLICY = ThrottlePolicy(free_failures=20, window_seconds=900, first_wait_seconds=1.0,
                                max_wait_seconds=900.0)


def seconds_to_wait(policy: ThrottlePolicy, failures: int, since_last_failure: float) -> float:
    """Seconds still to wait before another attempt is heard; 0 means go ahead."""
    beyond = failures - policy.free_failures
    if beyond < 0:
        return 0.0
    wait = min(policy.first_wait_seconds * (2 ** min(beyond, 32)), policy.max_wait_seconds)
    return max(0.0, wait - since_last_failure)
