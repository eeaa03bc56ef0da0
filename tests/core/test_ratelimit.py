"""The per-key limit's arithmetic (GCRA): bursts, the sustained rate, no window edges,
lease sizes, spending a lease, headers."""

import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core import ratelimit

MINUTE = ratelimit.PERIOD_MICROS
SECOND = 1_000_000


def run(limit: int, arrivals: list[int]) -> list[int]:
    """The arrival instants that pass, from a fresh key."""
    tat, passed = None, []
    for now in arrivals:
        result = ratelimit.claim(tat, now, limit)
        if result.granted:
            passed.append(now)
        tat = result.tat
    return passed


def test_a_fresh_key_may_send_its_whole_minute_at_once_then_one_each_interval():
    limit = 5
    step = ratelimit.interval(limit)  # 12 s
    assert len(run(limit, [0] * 8)) == 5
    # The old fixed window let 5 more through one second later, at the next minute.
    assert run(limit, [59 * SECOND] * 5 + [60 * SECOND] * 5) == [59 * SECOND] * 5
    assert len(run(limit, [0] * 5 + [step - 1, step])) == 6


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 500), st.lists(st.integers(0, 5 * MINUTE), min_size=1, max_size=300))
def test_never_more_than_the_limit_at_once_nor_above_the_rate_after(limit, times):
    passed = run(limit, sorted(times))
    step = ratelimit.interval(limit)
    for index, start in enumerate(passed):
        # A key saves up at most ``limit``: from any instant on, what passes within
        # ``span`` is at most the saved minute plus what the span earns.
        for span in (0, step, MINUTE):
            within = sum(1 for t in passed[index:] if t - start <= span)
            assert within <= limit + span // step


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 10**5), st.integers(0, 10**12), st.integers(0, 10**8), st.integers(1, 60))
def test_a_claim_grants_what_the_allowance_says_and_a_refusal_changes_nothing(limit, tat, ahead,
                                                                              wanted):
    now = tat - ahead + MINUTE // 2
    result = ratelimit.claim(tat, now, limit, wanted)
    assert result.granted == min(wanted, ratelimit.allowance(tat, now, limit))
    if not result.granted:
        assert result.tat == tat
        wait = ratelimit.refused(tat, now, limit).retry_micros
        assert ratelimit.claim(tat, now + wait, limit).granted == 1  # exactly then, not before
        assert wait <= 1 or ratelimit.claim(tat, now + wait - 1, limit).granted == 0


def test_small_limits_are_judged_request_by_request_and_leases_stay_small():
    assert [ratelimit.lease_size(n) for n in (1, 60, 199, 200, 1000, 10**6)] == [
        1, 1, 1, 2, 10, 50]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 10**6))
def test_a_lease_is_never_more_than_one_percent_of_the_limit_above_one(limit):
    size = ratelimit.lease_size(limit)
    assert size == 1 or size <= limit / 100


def test_a_lease_spends_its_permits_until_it_lapses():
    lease = ratelimit.Lease(tat=700, permits=3, expires=SECOND, step=100)
    # The row says 700; 2, 1, 0 permits are still in hand as each is spent.
    assert [lease.spend(10) for _ in range(4)] == [500, 600, 700, None]
    assert ratelimit.Lease(tat=700, permits=1, expires=SECOND, step=100).spend(SECOND + 1) is None


def test_headers_of_an_admitted_and_a_refused_request():
    limit, step = 5, 12 * SECOND
    admitted = ratelimit.admitted(2 * step, 0, limit)  # two used at once
    assert ratelimit.headers(admitted) == {
        "x-ratelimit-limit-requests": "5", "x-ratelimit-remaining-requests": "3",
        "x-ratelimit-reset-requests": "24s"}
    refused = ratelimit.headers(ratelimit.refused(5 * step + 500_000, 0, limit))
    assert refused["Retry-After"] == "13" and refused["retry-after-ms"] == "12500"
    assert refused["x-ratelimit-remaining-requests"] == "0"
    assert refused["x-ratelimit-reset-requests"] == "1m0.5s"


def test_durations_are_written_as_openai_writes_them():
    assert [ratelimit.duration_text(m) for m in (0, 1, 120_000, 8_640_000, 360 * SECOND,
                                                 3723 * SECOND + 500_000)] == [
        "0s", "1ms", "120ms", "8.64s", "6m0s", "1h2m3.5s"]


def test_a_decision_is_fixed_once_made_and_rounds_its_retry_up():
    decision = ratelimit.refused(10_000_000, 0, 60)
    assert decision.retry_after == math.ceil(decision.retry_micros / 1_000_000) >= 1
    with pytest.raises(AttributeError):
        decision.allowed = True  # type: ignore[misc]
    assert decision == ratelimit.refused(10_000_000, 0, 60)
    assert decision.allowed is False and decision.remaining == 0 and decision.limit == 60


def test_the_next_lease_is_claimed_ahead_once_half_is_spent():
    lease = ratelimit.Lease(tat=5_000, permits=50, expires=SECOND, step=100)
    due = []
    for _ in range(50):
        lease.spend(10)
        due.append(ratelimit.claim_ahead(lease, 50))
    assert due.index(True) == 24 and all(due[24:])  # 25 permits left: half of 50
    # Leases of fewer than four permits belong to keys too slow to queue on a claim.
    assert not ratelimit.claim_ahead(ratelimit.Lease(tat=300, permits=0, expires=SECOND,
                                                     step=100), 3)
