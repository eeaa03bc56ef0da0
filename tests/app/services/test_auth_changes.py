"""Change notices keep every process's API-key cache true (app.services.auth_changes).

Two processes are modelled by two sets of services on one database, each listening on
a connection of its own, as two ``svc serve`` processes do.
"""

import asyncio
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import asyncpg
import pytest

from app.services import auth_changes
from app.services.accounts import Accounts, Identity
from app.services.api_keys import ApiKeys
from app.services.auth_changes import LISTENER_NAME, AuthChanges
from app.services.identity_cache import IdentityCache

pytestmark = pytest.mark.anyio


@dataclass
class Process:
    changes: AuthChanges
    keys: ApiKeys
    accounts: Accounts

    @property
    def cache(self) -> IdentityCache:
        return self.changes.cache


class SlowToHear(AuthChanges):
    """A process busy for a while before it handles each notice."""

    def _on_change(self, *notice) -> None:
        asyncio.get_running_loop().call_later(0.3, AuthChanges._on_change, self, *notice)


@asynccontextmanager
async def listening_process(services, dsn: str, kind: type[AuthChanges] = AuthChanges):
    changes = kind(IdentityCache())
    process = Process(changes, ApiKeys(services.audit, changes),
                      Accounts(services.audit, changes))
    await changes.start(dsn)
    try:
        yield process
    finally:
        await changes.stop()


@pytest.fixture
async def two(services, database):
    async with listening_process(services, database) as first, \
            listening_process(services, database) as second:
        assert first.cache.live and second.cache.live
        yield first, second


async def minted(process: Process, services, email: str) -> tuple[Identity, str]:
    row = await services.accounts.create(email, "correct horse battery staple")
    owner = Identity.from_row(row)
    _, value = await process.keys.mint(owner, "laptop", None)
    return owner, value


async def assert_every_key_looked_up(services, changes: AuthChanges, dsn: str) -> None:
    """Started on ``dsn``, ``changes`` never trusts its cache: keys still work, from
    the database, and none is kept."""
    row = await services.accounts.create("ada@example.org", "correct horse battery staple")
    _, value = await services.api_keys.mint(Identity.from_row(row), "laptop", None)
    keys = ApiKeys(services.audit, changes)
    await changes.start(dsn)
    try:
        assert not changes.cache.live
        assert await keys.identify(value) is not None and len(changes.cache) == 0
    finally:
        await changes.stop()


async def until(condition, seconds: float = 20.0) -> None:
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.01)


async def test_a_key_looked_up_once_is_answered_from_memory(two, services):
    first, _ = two
    _, value = await minted(first, services, "ada@example.org")
    looked_up = await first.keys.identify(value)
    assert looked_up is not None and len(first.cache) == 1
    assert await first.keys.identify(value) is looked_up  # the kept object, no lookup


async def test_a_revocation_holds_in_every_process_as_soon_as_it_returns(two, services):
    first, second = two
    owner, value = await minted(first, services, "ada@example.org")
    assert await first.keys.identify(value) is not None
    assert await second.keys.identify(value) is not None
    key_id = (await first.keys.list_for(owner.account_id))[0]["id"]
    await first.keys.revoke(owner, key_id)
    # No waiting: the other process dropped what it kept before revoke returned.
    assert len(second.cache) == 0
    assert await second.keys.identify(value) is None
    assert await first.keys.identify(value) is None


async def test_a_revocation_waits_for_a_process_slow_to_hear_it(services, database):
    async with listening_process(services, database) as first, \
            listening_process(services, database, SlowToHear) as slow:
        owner, value = await minted(first, services, "ada@example.org")
        assert await slow.keys.identify(value) is not None
        key_id = (await first.keys.list_for(owner.account_id))[0]["id"]
        await first.keys.revoke(owner, key_id)
        assert await slow.keys.identify(value) is None


async def test_deactivating_the_owner_holds_in_every_process(two, services):
    first, second = two
    owner, value = await minted(first, services, "ada@example.org")
    assert await second.keys.identify(value) is not None
    admin = Identity.from_row(await services.accounts.create(
        "boss@example.org", "correct horse battery staple", "admin"))
    await first.accounts.update(owner.account_id, actor=admin.account_id, deactivated=True)
    assert await second.keys.identify(value) is None


async def test_a_role_change_is_seen_on_the_next_request(two, services):
    first, second = two
    owner, value = await minted(first, services, "ada@example.org")
    assert (await second.keys.identify(value)).role == "user"
    superadmin = Identity.from_row(await services.accounts.create(
        "root@example.org", "correct horse battery staple", "superadmin"))
    await first.accounts.update(owner.account_id, actor=superadmin.account_id, role="admin")
    assert (await second.keys.identify(value)).role == "admin"


async def test_busy_columns_send_no_notice(services, database):
    row = await services.accounts.create("ada@example.org", "correct horse battery staple")
    owner = Identity.from_row(row)
    _, value = await services.api_keys.mint(owner, "laptop", None)
    identity = await services.api_keys.identify(value)
    heard: list = []
    listener = await asyncpg.connect(database)
    try:
        await listener.add_listener(auth_changes.CHANGED, lambda *notice: heard.append(notice))
        await services.api_keys.consume(identity.api_key_id, 60)  # the counter, last use
        await services.accounts.set_password(owner.account_id, "another long password")
        # Notices of what committed before it reach the listener before this answer.
        await listener.execute("SELECT 1")
        await anyio.sleep(0)
        assert heard == []
        await services.accounts.update(owner.account_id, actor=owner.account_id,
                                       role="admin")  # and one that does send one
        await listener.execute("SELECT 1")
        await anyio.sleep(0)
        assert len(heard) == 1
    finally:
        await listener.close()


async def test_a_lost_listening_connection_drops_the_cache_and_listens_again(
        two, services, database):
    first, _ = two
    _, value = await minted(first, services, "ada@example.org")
    await first.keys.identify(value)
    dropped = first.cache.generation
    connection = await asyncpg.connect(database)
    try:
        await connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = $1", LISTENER_NAME)
    finally:
        await connection.close()
    await until(lambda: first.cache.generation > dropped and first.cache.live)
    assert len(first.cache) == 0
    assert await first.keys.identify(value) is not None and len(first.cache) == 1


async def test_a_process_that_cannot_listen_looks_every_key_up(services):
    from tests.support.listener import free_port

    await assert_every_key_looked_up(
        services, AuthChanges(IdentityCache()),
        f"postgresql://svc@127.0.0.1:{free_port()}/nowhere")


async def test_a_process_that_never_answers_delays_a_change_but_does_not_stop_it(
        two, services, database, monkeypatch):
    first, second = two
    monkeypatch.setattr(auth_changes, "ACK_TIMEOUT", 0.3)
    owner, value = await minted(first, services, "ada@example.org")
    mute = await asyncpg.connect(database)  # listens under the name, never answers
    try:
        await mute.add_listener(auth_changes.CHANGED, lambda *_: None)
        await mute.execute(f"SET application_name = '{LISTENER_NAME}'")
        key_id = (await first.keys.list_for(owner.account_id))[0]["id"]
        await first.keys.revoke(owner, key_id)
    finally:
        await mute.close()
    assert await second.keys.identify(value) is None
    assert (await first.keys.list_for(owner.account_id))[0]["state"] == "revoked"


async def test_without_listening_every_lookup_goes_to_the_database(services):
    row = await services.accounts.create("ada@example.org", "correct horse battery staple")
    _, value = await services.api_keys.mint(Identity.from_row(row), "laptop", None)
    assert await services.api_keys.identify(value) is not None
    assert not services.auth_changes.cache.live and len(services.auth_changes.cache) == 0


class Deaf(AuthChanges):
    """A connection whose notices stop coming back (at once unless told otherwise),
    as behind a transaction pooler or over a connection that died without a word."""

    deaf = True

    def _on_ack(self, *notice) -> None:
        if not self.deaf:
            AuthChanges._on_ack(self, *notice)


async def test_a_connection_that_does_not_hear_its_own_notice_is_not_trusted(
        services, database, monkeypatch):
    monkeypatch.setattr(auth_changes, "ACK_TIMEOUT", 0.3)
    await assert_every_key_looked_up(services, Deaf(IdentityCache()), database)


async def test_a_listener_that_stops_hearing_itself_stops_trusting_its_cache(
        services, database):
    class Deafening(Deaf):
        deaf = False

    row = await services.accounts.create("ada@example.org", "correct horse battery staple")
    _, value = await services.api_keys.mint(Identity.from_row(row), "laptop", None)
    async with listening_process(services, database, Deafening) as process:
        await process.keys.identify(value)
        assert process.cache.live and len(process.cache) == 1
        process.changes.deaf = True
        await until(lambda: not process.cache.live)  # the last vouch lapsed
        await until(lambda: len(process.cache) == 0)  # then the probe gave up: dropped


async def test_a_revocation_by_a_process_not_listening_still_waits_for_the_others(
        services, database):
    idle = Process(AuthChanges(IdentityCache()), None, None)  # never started
    idle.keys = ApiKeys(services.audit, idle.changes)
    async with listening_process(services, database, SlowToHear) as slow:
        owner, value = await minted(idle, services, "ada@example.org")
        assert await slow.keys.identify(value) is not None
        key_id = (await idle.keys.list_for(owner.account_id))[0]["id"]
        await idle.keys.revoke(owner, key_id)
        assert await slow.keys.identify(value) is None
