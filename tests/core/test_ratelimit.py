"""The per-key limit's arithmetic: windows, lease sizes, spending a lease, headers."""

from hypothesis import given, strategies as st

from core import ratelimit


def test_windows_are_calendar_minutes():
    assert ratelimit.window_start(120.0) == 120.0
    assert ratelimit.window_start(179.9) == 120.0
    assert ratelimit.window_start(180.0) == 180.0


def test_small_limits_are_counted_request_by_request_and_leases_stay_small():
    assert [ratelimit.lease_size(n) for n in (1, 60, 199, 200, 1000, 10**6)] == [
        1, 1, 1, 2, 10, 50]


@given(st.integers(1, 10**6))
def test_a_lease_is_never_more_than_one_percent_of_the_limit_above_one(limit):
    size = ratelimit.lease_size(limit)
    assert size == 1 or size <= limit / 100


def test_a_lease_spends_its_permits_in_its_own_window_only():
    lease = ratelimit.Lease(window=60.0, counted=7, permits=3)
    # The row says 7; 3 of those are still in hand, so 5, 6, 7 are used as each is spent.
    assert [lease.spend(60.0) for _ in range(4)] == [5, 6, 7, None]
    assert ratelimit.Lease(window=60.0, counted=1, permits=1).spend(120.0) is None


def test_headers_of_an_admitted_and_a_refused_request():
    admitted = ratelimit.decide(2, 5, 65.5)
    assert ratelimit.headers(admitted) == {
        "x-ratelimit-limit-requests": "5", "x-ratelimit-remaining-requests": "3",
        "x-ratelimit-reset-requests": "55s"}
    refused = ratelimit.headers(ratelimit.decide(None, 5, 65.5))
    assert refused["Retry-After"] == "55" and refused["x-ratelimit-remaining-requests"] == "0"
