"""The API keys' identity cache on its own: when it may answer, and when it must not."""

import datetime as dt

from app.services.identity_cache import IdentityCache

NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def live_cache(**options) -> IdentityCache[str]:
    cache: IdentityCache[str] = IdentityCache(**options)
    cache.vouch(3600)
    return cache


def test_nothing_is_kept_while_change_notices_are_not_heard():
    cache: IdentityCache[str] = IdentityCache()
    cache.put("fp", "ada", None, cache.generation)
    assert cache.get("fp", NOW) is None and len(cache) == 0


def test_a_kept_identity_is_answered_until_the_cache_is_dropped():
    cache = live_cache()
    cache.put("fp", "ada", None, cache.generation)
    assert cache.get("fp", NOW) == "ada"
    cache.clear()
    assert cache.get("fp", NOW) is None


def test_losing_the_notices_drops_everything_kept():
    cache = live_cache()
    cache.put("fp", "ada", None, cache.generation)
    cache.withdraw()
    assert cache.get("fp", NOW) is None
    cache.vouch(3600)
    assert cache.get("fp", NOW) is None


def test_nothing_is_answered_once_the_last_vouch_has_lapsed():
    clock = Clock()
    cache = live_cache(clock=clock)
    cache.vouch(1.5)
    cache.put("fp", "ada", None, cache.generation)
    clock.now += 1.4
    assert cache.get("fp", NOW) == "ada"
    clock.now += 0.1
    assert not cache.live and cache.get("fp", NOW) is None
    cache.put("other", "bob", None, cache.generation)  # not kept while unvouched
    cache.vouch(1.5)  # heard again: every notice before it was handled
    assert cache.get("fp", NOW) == "ada" and cache.get("other", NOW) is None


def test_a_lookup_that_began_before_a_drop_does_not_put_its_answer_back():
    cache = live_cache()
    began = cache.generation
    cache.clear()  # a revocation committed while the lookup was on its way
    cache.put("fp", "ada", None, began)
    assert cache.get("fp", NOW) is None


def test_an_expired_key_is_not_answered_from_memory():
    cache = live_cache()
    cache.put("fp", "ada", NOW + dt.timedelta(seconds=1), cache.generation)
    assert cache.get("fp", NOW) == "ada"
    assert cache.get("fp", NOW + dt.timedelta(seconds=1)) is None
    assert len(cache) == 0


def test_entries_age_out_even_without_a_notice():
    clock = Clock()
    cache = live_cache(max_age=60.0, clock=clock)
    cache.vouch(3600)
    cache.put("fp", "ada", None, cache.generation)
    clock.now += 59.9
    assert cache.get("fp", NOW) == "ada"
    clock.now += 0.1
    assert cache.get("fp", NOW) is None


def test_a_full_cache_lets_the_oldest_entry_go():
    cache = live_cache(max_entries=2)
    for name in ("a", "b", "c"):
        cache.put(name, name.upper(), None, cache.generation)
    assert [cache.get(name, NOW) for name in ("a", "b", "c")] == [None, "B", "C"]


def test_without_a_time_given_expiry_is_judged_at_the_current_time():
    cache = live_cache()
    current = dt.datetime.now(dt.UTC)
    cache.put("lasting", "ada", current + dt.timedelta(days=1), cache.generation)
    cache.put("never", "bob", None, cache.generation)
    cache.put("lapsed", "eve", current - dt.timedelta(seconds=1), cache.generation)
    assert [cache.get(name) for name in ("lasting", "never", "lapsed")] == ["ada", "bob", None]
    assert len(cache) == 2
