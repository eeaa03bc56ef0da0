"""Which calls no process runs any more (``core.call_leases``)."""

from __future__ import annotations

import datetime as dt
import uuid

from core.call_leases import ADOPTION_GRACE, RunningCall, orphaned

NOW = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)
ME, OTHER, DEAD = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
LEASES = {ME: NOW + dt.timedelta(seconds=10), OTHER: NOW + dt.timedelta(seconds=3),
          DEAD: NOW - dt.timedelta(seconds=1)}
LONG_AGO = NOW - ADOPTION_GRACE - dt.timedelta(seconds=1)


def _call(owner, started=LONG_AGO) -> RunningCall:
    return RunningCall(uuid.uuid4(), owner, started)


def test_a_call_whose_owner_holds_a_live_lease_runs_on():
    calls = [_call(OTHER), _call(ME)]
    assert orphaned(calls, LEASES, NOW, me=ME, running_here={calls[1].call_id}) == []


def test_a_lapsed_a_missing_or_no_owner_is_orphaned():
    calls = [_call(DEAD), _call(uuid.uuid4()), _call(None)]
    assert orphaned(calls, LEASES, NOW, me=ME) == calls


def test_a_lease_expiring_exactly_now_has_lapsed():
    call = _call(OTHER)
    assert orphaned([call], {OTHER: NOW}, NOW) == [call]


def test_our_own_call_we_no_longer_run_is_orphaned_after_the_grace():
    stale, fresh = _call(ME), _call(ME, started=NOW - dt.timedelta(seconds=1))
    assert orphaned([stale, fresh], LEASES, NOW, me=ME) == [stale]


def test_another_process_s_calls_are_not_judged_by_our_running_set():
    call = _call(OTHER)
    assert orphaned([call], LEASES, NOW, me=ME, running_here=set()) == []
