"""The refusal decision: the first reason in the spec's order, for every combination."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from core.refusals import (
    REFUSAL_ORDER,
    LimitCounts,
    Limits,
    LineFacts,
    RefusalReason,
    decide,
    streaming_synthesiser_configured,
)

R = RefusalReason
GOOD = LineFacts(True, True, True, True, True, True, 16000)
QUIET = LimitCounts(0, 0, 0)


def test_the_order_is_the_spec_table_with_the_outside_reasons_where_they_occur():
    assert [r.value for r in REFUSAL_ORDER] == [
        "public_source", "lookup_failed", "unknown_number", "line_disabled",
        "agent_unavailable", "owner_unavailable", "voice_not_enabled",
        "no_streaming_synthesiser", "unsupported_rate", "rate_from", "rate_to",
        "concurrency", "ticket_unavailable"]


def test_a_good_call_is_taken():
    assert decide(GOOD) is None and decide(GOOD, QUIET) is None
    assert decide(LineFacts(True, True, True, True, True, True, 8000), QUIET) is None


def test_limits_refuse_at_their_edge():
    limits = Limits(max_concurrent_calls=2)
    assert decide(GOOD, LimitCounts(4, 59, 1), limits) is None
    assert decide(GOOD, LimitCounts(5, 0, 0), limits) is R.RATE_FROM
    assert decide(GOOD, LimitCounts(0, 60, 0), limits) is R.RATE_TO
    assert decide(GOOD, LimitCounts(0, 0, 2), limits) is R.CONCURRENCY


_FACT_REASONS = [R.UNKNOWN_NUMBER, R.LINE_DISABLED, R.AGENT_UNAVAILABLE, R.OWNER_UNAVAILABLE,
                 R.VOICE_NOT_ENABLED, R.NO_STREAMING_SYNTHESISER, R.UNSUPPORTED_RATE]


def test_every_combination_of_facts_gives_the_first_failing_reason():
    for flags in itertools.product((True, False), repeat=7):
        facts = LineFacts(*flags[:6], sample_rate=16000 if flags[6] else 44100)
        failing = [reason for reason, holds in zip(_FACT_REASONS, flags) if not holds]
        assert decide(facts, QUIET) == (failing[0] if failing else None)


@given(st.integers(0, 10), st.integers(0, 100), st.integers(0, 10), st.integers(1, 10))
def test_limits_are_consulted_only_after_the_facts(rings, calls, busy, cap):
    assert decide(LineFacts(False, True, True, True, True, True, 16000),
                  LimitCounts(rings, calls, busy), Limits(cap)) is R.UNKNOWN_NUMBER
    reason = decide(GOOD, LimitCounts(rings, calls, busy), Limits(cap))
    expected = (R.RATE_FROM if rings >= 5 else R.RATE_TO if calls >= 60
                else R.CONCURRENCY if busy >= cap else None)
    assert reason is expected


def test_a_synthesiser_needs_both_the_switch_and_an_address():
    assert streaming_synthesiser_configured(True, "local")
    assert not streaming_synthesiser_configured(False, "local")
    assert not streaming_synthesiser_configured(True, "  ")
    assert not streaming_synthesiser_configured(True, None)
