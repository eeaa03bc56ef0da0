"""Reserving a sign-in attempt before its password is checked.

The failures in the window are counted, the slow-down decided and the attempt recorded
as a failure in one transaction, under an advisory lock per account and per address.
So attempts sent at once queue here and each sees the ones before it: after the free
failures, a burst gets one check at most rather than one each. A correct password
then clears the account's failures, the reservation with them.
"""

from __future__ import annotations

from typing import Any

from app import db
from app.errors import TooManyRequests
from core import throttle

_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))"
# Counted on the clock rather than now(), which is when the transaction began: it may
# have waited on the lock for the attempts before it.
_RECENT = """
    SELECT count(*) AS failures,
           extract(epoch FROM clock_timestamp() - max(at))::float8 AS since_last
      FROM login_failure
     WHERE {column} = $1 AND at > clock_timestamp() - make_interval(secs => $2)
"""
_RESERVE = "INSERT INTO login_failure (email, address, at) VALUES ($1, $2, clock_timestamp())"
_CLEAR = "DELETE FROM login_failure WHERE email = $1"
_DIMENSIONS = (("email", throttle.ACCOUNT_POLICY), ("address", throttle.ADDRESS_POLICY))


def _refusal(seconds: float) -> TooManyRequests:
    wait = int(seconds) + 1
    return TooManyRequests(f"Too many failed sign-ins. Try again in {wait} seconds.",
                           code="too_many_attempts", retry_after=wait)


async def reserve(email: str, address: str) -> None:
    """Count this attempt as a failure now, or refuse it with 429 while slowed down."""
    keys = {"email": email, "address": address}
    async with db.connection() as connection, connection.transaction():
        # Always the account's lock before the address's, so two attempts never wait
        # on each other crosswise.
        for column, _ in _DIMENSIONS:
            await connection.execute(_LOCK, f"sign-in:{column}:{keys[column]}")
        for column, policy in _DIMENSIONS:
            recent: Any = await connection.fetchrow(_RECENT.format(column=column),
                                                    keys[column], float(policy.window_seconds))
            if recent["failures"]:
                wait = throttle.seconds_to_wait(policy, recent["failures"],
                                                recent["since_last"])
                if wait > 0:
                    raise _refusal(wait)
        await connection.execute(_RESERVE, email, address)


async def succeeded(email: str) -> None:
    """The password was right: the account's failures, this reservation with them, go."""
    async with db.connection() as connection:
        await connection.execute(_CLEAR, email)
