"""The embedded server starts wherever the data directory is, however long its path,
and never where starting it would take the data directory from its owner."""

from __future__ import annotations

import asyncio
import os
import stat
import warnings

import asyncpg
import platformdirs
import pytest

from adapters.embedded_postgres import DataOwnedByAnother, EmbeddedPostgres, private_runtime_dir


def test_a_data_directory_too_deep_for_a_socket_still_starts(tmp_path):
    # 120 bytes of path before "/.s.PGSQL.5432": longer than a Unix socket may be.
    deep = tmp_path / ("d" * max(1, 120 - len(str(tmp_path)))) / "pg"
    assert len(str(deep)) > 107
    server = EmbeddedPostgres(deep)
    dsn = server.start()
    try:
        async def ask():
            connection = await asyncpg.connect(dsn)
            try:
                return await connection.fetchval("SELECT 1")
            finally:
                await connection.close()

        assert asyncio.run(ask()) == 1
    finally:
        server.stop()


def test_the_runtime_directory_is_short_private_and_accepted_without_a_warning(monkeypatch):
    runtime = private_runtime_dir()
    assert runtime.stat().st_uid == os.getuid()
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o700
    assert len(str(runtime / "python_PostgresServer" / ("h" * 10) / ".s.PGSQL.5432")) < 100
    # pgserver finds it through platformdirs, which warns (on a served process's
    # stderr) about a runtime directory any other user could replace.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert platformdirs.user_runtime_path("python_PostgresServer").parent == runtime


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can start another user's data")
def test_root_is_refused_a_data_directory_another_user_owns(tmp_path):
    # As root, pgserver would hand the directory to a user of its own, and the owner's
    # svc could not start it again.
    pgdata = tmp_path / "pg"
    pgdata.mkdir()
    os.chown(pgdata, 65534, 65534)
    with pytest.raises(DataOwnedByAnother, match="not as root"):
        EmbeddedPostgres(pgdata).start()
    assert pgdata.stat().st_uid == 65534 and list(pgdata.iterdir()) == []
