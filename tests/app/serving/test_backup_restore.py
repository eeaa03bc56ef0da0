"""``svc backup`` and ``svc restore`` as an operator runs them: beside a serving ``svc
serve`` on the embedded PostgreSQL, or against a database at ``database.url``; and the
refusal of a data directory another PostgreSQL major version made."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import asyncpg
import httpx
import pytest

from adapters.postgres_programs import server_major_version
from tests.support.api_users import first_admin, user_with_key
from tests.support.listener import free_port
from tests.support.postgres import with_database
from tests.support.processes import printed_once_serving, serve_logged, stop_process

pytestmark = pytest.mark.e2e


def environment(data_dir: Path, **settings: str) -> dict[str, str]:
    """The process environment of an ``svc`` command on ``data_dir``, with ``settings``
    (``SVC__…`` names without the prefix) and no other svc setting of the test run's."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("SVC__")}
    env.update(SVC__STORAGE__DATA_DIR=str(data_dir), SVC__SERVER__WORKERS="1",
               **{f"SVC__{name}": value for name, value in settings.items()})
    return env


def svc(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def refusal(finished: subprocess.CompletedProcess) -> str:
    """The one line a refused command printed (JSON log lines aside)."""
    lines = [line for line in finished.stderr.splitlines() if not line.startswith("{")]
    assert len(lines) == 1, finished.stderr
    return lines[0]


@contextmanager
def serving(data_dir: Path, log: Path):
    """``svc serve`` on ``data_dir``: its address and what it printed; stopped after."""
    port = free_port()
    process = serve_logged(["serve"], environment(data_dir, SERVER__PORT=str(port)), log)
    try:
        yield f"http://127.0.0.1:{port}", printed_once_serving(process, log)
    finally:
        stop_process(process)


@contextmanager
def asking_all_along(url: str, headers: dict[str, str]):
    """The statuses of requests to ``url`` asked one after another, the first before
    the block begins, the last after it ends."""
    statuses: list[int] = []
    answered, done = threading.Event(), threading.Event()

    def ask() -> None:
        with httpx.Client(headers=headers) as client:
            while not done.is_set():
                statuses.append(client.get(url).status_code)
                answered.set()

    asker = threading.Thread(target=ask)
    asker.start()
    answered.wait(timeout=30)
    try:
        yield statuses
    finally:
        done.set()
        asker.join(timeout=30)


async def _contents(dsn: str) -> dict[str, int]:
    """Every table of the database at ``dsn`` with its number of rows."""
    connection = await asyncpg.connect(dsn)
    try:
        names = [row["tablename"] for row in await connection.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        return {name: await connection.fetchval(f'SELECT count(*) FROM public."{name}"')
                for name in names}
    finally:
        await connection.close()


def contents(dsn: str) -> dict[str, int]:
    return asyncio.run(_contents(dsn))


def test_a_backup_taken_while_serving_restores_into_a_fresh_data_directory(tmp_path):
    first, fresh = tmp_path / "first", tmp_path / "fresh"
    backups = tmp_path / "backups"
    backups.mkdir()
    backup = backups / "svc.dump"
    with serving(first, tmp_path / "first.log") as (base, printed):
        root = first_admin(base, printed)
        _, desk = user_with_key(base, root, "desk@clinic.example")
        agent = httpx.post(f"{base}/api/agents", headers=desk,
                           json={"name": "Reception", "model": "local"})
        assert agent.status_code == 201, agent.text
        audited = {entry["id"] for entry in
                   httpx.get(f"{base}/api/admin/audit", headers=root).json()["data"]}
        assert audited

        with asking_all_along(f"{base}/api/agents", desk) as statuses:
            made = svc(["backup", str(backup)], environment(first))
        assert made.returncode == 0, made.stderr
        assert statuses and set(statuses) == {200}
        # The backup used the serving process's PostgreSQL, and left it running.
        assert httpx.get(f"{base}/healthz").json()["database"] is True

    assert f"keep a copy of {first / 'message_encryption_key'} apart" in made.stdout
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert [path.name for path in backups.iterdir()] == ["svc.dump"]

    fresh.mkdir()
    shutil.copy2(first / "message_encryption_key", fresh / "message_encryption_key")
    restored = svc(["restore", str(backup)], environment(fresh))
    assert restored.returncode == 0, restored.stderr

    with serving(fresh, tmp_path / "fresh.log") as (base, printed):
        assert "one-time password" not in printed  # the superadmin came across
        # So did the sessions: the ones signed in before the backup still work.
        users = httpx.get(f"{base}/api/admin/users", headers=root).json()["data"]
        assert "desk@clinic.example" in {user["email"] for user in users}
        agents = httpx.get(f"{base}/api/agents", headers=desk).json()["data"]
        assert [found["id"] for found in agents] == [agent.json()["id"]]
        entries = httpx.get(f"{base}/api/admin/audit", headers=root).json()["data"]
        assert audited <= {entry["id"] for entry in entries}


def test_with_a_database_url_a_backup_restores_into_an_empty_database_only(postgres,
                                                                            tmp_path):
    backup = tmp_path / "svc.dump"
    names = [f"svc_backup_{os.getpid()}_{role}" for role in ("source", "empty", "taken")]
    try:
        source = asyncio.run(postgres.clone_template(names[0]))
        empty = asyncio.run(postgres.create_empty(names[1]))
        taken = asyncio.run(postgres.clone_template(names[2]))
        made = svc(["backup", str(backup)], environment(tmp_path, DATABASE__URL=source))
        assert made.returncode == 0, made.stderr
        assert "at database.url" in made.stdout and source not in made.stdout

        restored = svc(["restore", str(backup)], environment(tmp_path, DATABASE__URL=empty))
        assert restored.returncode == 0, restored.stderr
        assert contents(empty) == contents(source)

        before = contents(taken)
        refused = svc(["restore", str(backup)], environment(tmp_path, DATABASE__URL=taken))
        assert refused.returncode == 65
        assert "already holds svc's tables" in refusal(refused)
        assert contents(taken) == before
    finally:
        for name in names:
            asyncio.run(postgres.drop(name))


def test_a_file_that_is_no_backup_is_refused_before_anything_is_made(tmp_path):
    notes = tmp_path / "notes.dump"
    notes.write_text("not a backup at all\n")
    refused = svc(["restore", str(notes)], environment(tmp_path / "data"))
    assert refused.returncode == 65
    assert f"{notes} is not a pg_dump archive" in refusal(refused)
    assert not (tmp_path / "data").exists()


def test_a_failed_backup_leaves_no_file(postgres, tmp_path):
    backups = tmp_path / "backups"
    backups.mkdir()
    # pg_dump begins the file, then cannot read the database.
    missing = with_database(postgres.admin_dsn, "svc_backup_no_such_database")
    failed = svc(["backup", str(backups / "svc.dump")],
                 environment(tmp_path, DATABASE__URL=missing))
    assert failed.returncode == 1
    assert "the backup failed" in refusal(failed) and "does not exist" in refusal(failed)
    assert list(backups.iterdir()) == []

    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    failed = svc(["backup", str(not_a_folder / "svc.dump")],
                 environment(tmp_path, DATABASE__URL=postgres.admin_dsn))
    assert failed.returncode == 73
    assert "cannot write the backup" in refusal(failed)
    assert not_a_folder.read_text() == ""


def test_a_data_directory_of_another_postgresql_version_is_refused_unstarted(tmp_path):
    pgdata = tmp_path / "data" / "pg"
    pgdata.mkdir(parents=True)
    ours = server_major_version()
    theirs = str(int(ours) - 1)
    (pgdata / "PG_VERSION").write_text(theirs + "\n")
    refused = svc(["serve"], environment(tmp_path / "data", SERVER__PORT=str(free_port())))
    assert refused.returncode == 1 and "svc is serving" not in refused.stdout
    assert (f"was made by PostgreSQL {theirs} and this svc runs PostgreSQL {ours}: back it "
            f"up with `svc backup`") in refusal(refused)
    assert "`svc restore` the backup under this one" in refusal(refused)
    # No server log, no postmaster.pid: the server was never started.
    assert [path.name for path in pgdata.iterdir()] == ["PG_VERSION"]
