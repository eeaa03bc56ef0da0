"""The token bucket of hand-made actions: a burst, then one per refill period."""

from __future__ import annotations

from core.bursts import BurstPolicy, Bursts

POLICY = BurstPolicy(burst=3, refill_seconds=10.0)


def test_a_burst_then_a_wait_then_one_more():
    bursts = Bursts(POLICY)
    assert [bursts.take("ann", 100.0) for _ in range(3)] == [0, 0, 0]
    assert bursts.take("ann", 100.0) == 10  # refused: nothing spent
    assert bursts.take("ann", 104.0) == 6
    assert bursts.take("ann", 110.0) == 0
    assert bursts.take("ann", 110.0) == 10


def test_callers_have_buckets_of_their_own():
    bursts = Bursts(POLICY)
    for _ in range(3):
        bursts.take("ann", 0.0)
    assert bursts.take("ann", 0.0) > 0
    assert bursts.take("bob", 0.0) == 0


def test_a_bucket_never_holds_more_than_the_burst_and_full_ones_are_forgotten():
    bursts = Bursts(POLICY)
    bursts.take("ann", 0.0)
    assert [bursts.take("ann", 1000.0) for _ in range(4)] == [0, 0, 0, 10]
    bursts.take("bob", 1000.0)
    bursts.take("carl", 2000.0)
    assert set(bursts._buckets) == {"carl"}
