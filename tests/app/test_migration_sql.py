"""Each migration module is what Piccolo's runner reads: an ``ID``, a ``VERSION``, a
``DESCRIPTION`` and a ``forwards()`` giving one manager that runs its statements
(``app.migration_sql.sql_migration``). Applying them is the schema test's part."""

from __future__ import annotations

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
