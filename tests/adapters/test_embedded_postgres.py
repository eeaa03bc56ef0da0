"""The embedded server starts wherever the data directory is, however long its path."""

from __future__ import annotations

import asyncio
import os
import stat

import asyncpg

from adapters.embedded_postgres import EmbeddedPostgres, private_runtime_dir


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


def test_the_runtime_directory_is_short_and_private():
    runtime = private_runtime_dir()
    mode = runtime.stat().st_mode
    assert runtime.stat().st_uid == os.getuid()
    assert stat.S_IMODE(mode) & 0o077 == 0
    assert len(str(runtime / "python_PostgresServer" / ("h" * 10) / ".s.PGSQL.5432")) < 100
