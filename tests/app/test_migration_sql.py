"""Each migration module is what Piccolo's runner reads: an ``ID``, a ``VERSION``, a
``DESCRIPTION`` and a ``forwards()`` giving one manager that runs its statements
(``app.migration_sql.sql_migration``), and what a migration runs never changes once
written. Applying them is the schema test's part."""

from __future__ import annotations

import hashlib
import importlib
import pkgutil

import pytest

import app.piccolo_migrations
from app.migration_sql import sql_migration

pytestmark = pytest.mark.anyio

MODULES = [importlib.import_module(f"app.piccolo_migrations.{info.name}")
           for info in pkgutil.iter_modules(app.piccolo_migrations.__path__)]


def test_every_migration_module_is_found():
    assert len(MODULES) >= 16
    assert len({module.ID for module in MODULES}) == len(MODULES)


@pytest.mark.parametrize("module", MODULES, ids=lambda module: module.ID)
async def test_forwards_gives_one_sql_step_named_by_the_module(module):
    assert module.VERSION and module.DESCRIPTION and module.STATEMENTS
    manager = await module.forwards()
    assert (manager.migration_id, manager.app_name, manager.description) == (
        module.ID, "svc", module.DESCRIPTION)
    assert len(manager.raw) == 1


async def test_each_call_of_forwards_gives_a_fresh_manager():
    forwards = sql_migration("2000-01-01T00:00:00:000000", "nothing", ["SELECT 1"])
    first, second = await forwards(), await forwards()
    assert first is not second and first.raw[0] is not second.raw[0]


# What each migration runs, pinned: an installed database has run it, so neither its
# text nor a column it takes from ``app.migration_sql`` may change. A new migration
# adds its line once; an old line never changes.
SQL_DIGESTS = {
    "2026-11-22T06:00:00:000000": "8b689f6f80612872",
    "2026-11-22T06:30:00:000000": "f08877885964a594",
    "2026-11-22T07:00:00:000000": "fb401ee3fb6bf09b",
    "2026-11-22T07:30:00:000000": "113a9a21db6328d3",
    "2026-11-22T08:00:00:000000": "10b862d6ced8466d",
    "2026-11-23T02:00:00:000000": "7ba591377bccbbb4",
    "2026-11-23T03:00:00:000000": "44e33f6bf297c485",
    "2026-11-23T04:00:00:000000": "b184f5633605c7ae",
    "2026-11-25T10:00:00:000000": "7386a66918fa69b2",
    "2026-11-25T11:00:00:000000": "ffcf6ba438ed0a9c",
    "2026-11-25T18:40:00:000000": "4cf29cdd6754866e",
    "2026-11-25T19:05:00:000000": "e13be2f7528da38a",
    "2026-11-25T19:35:00:000000": "aba89ee646e9d8dd",
    "2026-11-25T21:50:00:000000": "43d4724f2af18f7a",
    "2026-11-25T21:55:00:000000": "df526526d1eb0651",
    "2026-11-26T01:20:00:000000": "08257a655842f69d",
    "2026-11-27T01:10:00:000000": "b805f35670c864f8",
}


def _digest(statements: list[str]) -> str:
    return hashlib.sha256("\n;\n".join(statements).encode()).hexdigest()[:16]


def test_every_migration_has_its_sql_pinned():
    assert {module.ID for module in MODULES} == set(SQL_DIGESTS)


@pytest.mark.parametrize("module", MODULES, ids=lambda module: module.ID)
def test_a_migration_runs_what_it_ran_when_written(module):
    assert _digest(module.STATEMENTS) == SQL_DIGESTS[module.ID], (
        f"migration {module.ID} now runs other SQL than an installed database ran")
