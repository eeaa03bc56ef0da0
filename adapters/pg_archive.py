"""A database saved as a ``pg_dump`` custom-format archive, and put back from one.

``pg_dump`` reads the whole database in one snapshot (a repeatable-read transaction),
so an archive is consistent while the service keeps writing. It holds only the
lightest table locks, which nothing svc does at run time waits on (svc changes its
schema in migrations only). The programs are the wheel's (``postgres_programs``), used
the same way for the embedded server and for one at ``database.url``.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator
from urllib.parse import unquote, urlsplit, urlunsplit

from adapters.postgres_programs import program

#: How long pg_dump waits for a table another statement holds exclusively (only a
#: migration does) before it gives up, instead of waiting without end.
LOCK_WAIT = "60s"

# A table in ``pg_restore --list``: "223; 1259 17205 TABLE public account postgres";
# its rows are a "TABLE DATA" entry of their own.
_TABLE_ENTRY = re.compile(r"^\d+; \d+ \d+ TABLE (?!DATA )(\S+) (\S+)", re.MULTILINE)
_CUSTOM_FORMAT = re.compile(r"^;\s+Format: CUSTOM\s*$", re.MULTILINE)


class ArchiveError(Exception):
    """pg_dump or pg_restore failed; the message is the program's own, on one line."""


class NotAnArchive(ArchiveError):
    """The file is not a pg_dump custom-format archive."""


@contextlib.contextmanager
def written_whole(target: Path) -> Iterator[Path]:
    """A new file beside ``target``, readable by this user only, to write. It takes
    ``target``'s name only when the block ends without an error, and is removed
    otherwise: ``target`` is always the previous file or a complete new one."""
    descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                        suffix=".partial")
    os.close(descriptor)
    partial = Path(name)
    try:
        yield partial
        _to_disk(partial)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    _to_disk(target.parent)  # the new name too, not only the bytes


def dump(dsn: str, into: Path) -> None:
    """The database at ``dsn``, whole, as a custom-format archive in ``into``."""
    target, env = _libpq_target(dsn)
    _run("pg_dump", ["--format=custom", "--no-password", f"--lock-wait-timeout={LOCK_WAIT}",
                     f"--file={into}", f"--dbname={target}"], env)


def archived_tables(archive: Path) -> list[tuple[str, str]]:
    """The ``(schema, table)`` pairs ``archive`` creates; :class:`NotAnArchive` when it is
    no custom-format archive (read from its table of contents, nothing is restored)."""
    if not archive.is_file():
        raise NotAnArchive(f"{archive} is not a file")
    try:
        contents = _run("pg_restore", ["--list", str(archive)])
    except ArchiveError as exc:
        raise NotAnArchive(f"{archive} is not a pg_dump archive ({exc})") from None
    if not _CUSTOM_FORMAT.search(contents):
        raise NotAnArchive(f"{archive} is a pg_dump archive but not in the custom format "
                           "(pg_dump --format=custom) a backup is made in")
    return _TABLE_ENTRY.findall(contents)


def restore(archive: Path, dsn: str) -> None:
    """Everything in ``archive`` into the database at ``dsn``, in one transaction, so a
    failure leaves nothing of it. Owners and grants are not restored: what is made
    belongs to the role ``dsn`` signs in as, on this server or another."""
    target, env = _libpq_target(dsn)
    _run("pg_restore", ["--single-transaction", "--exit-on-error", "--no-owner",
                        "--no-acl", "--no-password", f"--dbname={target}", str(archive)], env)


def _libpq_target(dsn: str) -> tuple[str, dict[str, str] | None]:
    """``dsn`` without its password, and an environment that gives the password to
    libpq instead (None: this process's own): a command line is visible to every user
    of the machine."""
    parts = urlsplit(dsn)
    if not parts.password:
        return dsn, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    env = {**os.environ, "PGPASSWORD": unquote(parts.password)}
    return urlunsplit(parts._replace(netloc=f"{user}@{hostport}")), env


def _run(name: str, args: list[str], env: dict[str, str] | None = None) -> str:
    try:
        finished = subprocess.run([program(name), *args], env=env, capture_output=True,
                                  text=True, stdin=subprocess.DEVNULL)
    except OSError as exc:  # the program missing or not runnable: not the backup file's fault
        raise ArchiveError(f"{name} could not be run: {exc.strerror or exc}") from None
    if finished.returncode != 0:
        raise ArchiveError(_first_error(finished.stderr)
                           or f"{name} stopped with exit status {finished.returncode}")
    return finished.stdout


def _first_error(printed: str) -> str:
    """The first line a PostgreSQL program marked as an error, without its name, with
    its runs of spaces made one ("FATAL:  database" ...)."""
    lines = [line.strip() for line in printed.splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line] or lines[-1:]
    if not errors:
        return ""
    return " ".join(errors[0].split(" error: ", 1)[-1].split())


def _to_disk(path: Path) -> None:
    """Flush ``path`` (a file, or a directory's entries) to the disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
