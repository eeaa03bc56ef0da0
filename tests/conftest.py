"""Fixtures shared by the whole suite.

Async tests run on anyio's pytest plugin with the asyncio backend: mark them with
``@pytest.mark.anyio``.

Database: one PostgreSQL per test run — the embedded server in a temporary directory,
or the server named by ``SVC__DATABASE__URL`` — with a template database migrated once.
Each test that asks for ``database`` gets a fresh copy (``CREATE DATABASE … TEMPLATE``),
so tests are isolated and nothing needs cleaning between them; each copy is made while
the test before it runs (``DatabasesAhead``).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support.postgres import DatabasesAhead, TestPostgres

# No test asserts a timing, and hypothesis's per-example deadline is one: on a busy
# machine (CI shares its cores) a first example that pays for an import or a warm-up
# would fail the run for nothing.
settings.register_profile("svc", deadline=None)
settings.load_profile("svc")


def pytest_configure(config) -> None:
    """Give each checkout its own root for temporary directories.

    pytest prunes all but the newest few numbered directories under one root per user,
    so two runs from different checkouts at once would delete each other's embedded
    PostgreSQL cluster mid-run. ``PYTEST_DEBUG_TEMPROOT`` or ``--basetemp`` still win.
    """
    # pytest-xdist hands out the modules in the order ``pytest_collection_modifyitems``
    # below gives them, not re-sorted by their number of tests.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    if config.option.basetemp or "PYTEST_DEBUG_TEMPROOT" in os.environ:
        return
    checkout = hashlib.sha256(str(config.rootpath).encode()).hexdigest()[:12]
    root = Path(tempfile.gettempdir()) / f"svc-tests-{checkout}"
    root.mkdir(mode=0o755, exist_ok=True)
    os.environ["PYTEST_DEBUG_TEMPROOT"] = str(root)


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="session")
def postgres(tmp_path_factory) -> TestPostgres:
    server = TestPostgres.start(os.environ.get("SVC__DATABASE__URL"),
                                tmp_path_factory.mktemp("pg"))
    try:
        asyncio.run(server.prepare_template())
        yield server
    finally:
        asyncio.run(server.drop_template())
        server.stop()


@pytest.fixture(scope="session")
def databases(postgres: TestPostgres) -> DatabasesAhead:
    ahead = postgres.databases_ahead()
    yield ahead
    ahead.close()


@pytest.fixture
async def database(databases: DatabasesAhead):
    """A fresh migrated database; the process-wide engine points at it, with a pool."""
    from app import db

    dsn = await databases.take()
    db.use_database(dsn)
    await db.open_pool(max_size=10)
    try:
        yield dsn
    finally:
        await db.close_pool()
        databases.give_back(dsn)


@pytest.fixture
def encryption_key() -> str:
    return secrets.token_hex(32)


@pytest.fixture
def boot(tmp_path: Path, encryption_key: str):
    from app.config import BootConfig

    return BootConfig({
        "storage.data_dir": str(tmp_path / "data"),
        "storage.recordings_dir": str(tmp_path / "data" / "recordings"),
        "message_encryption_key": encryption_key,
        "server.public_url": "http://127.0.0.1:8080",
    })


@pytest.fixture
async def services(database, boot):
    from app.bundle import Services

    services = Services.build(boot)
    services.settings.cache_seconds = 0  # every read sees the latest write
    # The readiness check asks the public address through the network; tests never
    # leave the machine, so here every public address answers (tests that judge the
    # probe set their own).
    services.telephony.readiness.health_probe = answered_200
    yield services
    await services.aclose()  # its HTTP sessions, when no app stopped it first


async def answered_200(url: str):
    from adapters.health_probe import HealthAnswer

    return HealthAnswer(200, from_svc=True)


@pytest.fixture
async def api(services):
    """The application served over real HTTP on a free loopback port."""
    from tests.support.http import running_app

    async with running_app(services) as client:
        yield client


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:
    """The longest modules first (``tests.support.module_order``)."""
    from tests.support.module_order import longest_first, read_durations

    root = config.rootpath

    def module_of(item) -> str:
        path = item.path
        return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)

    items[:] = longest_first(items, module_of, read_durations())
