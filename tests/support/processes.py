"""Stopping a server process started by a test or a benchmark."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path


def children(pid: int) -> set[int]:
    """The process ids of ``pid``'s children (a supervisor's workers), from /proc."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.update(int(child) for child in text)
    return found


def stop_process(process: subprocess.Popen, timeout: float = 30) -> None:
    """SIGTERM, as an operator stops a server; SIGKILL if it has not ended in time."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def serve_logged(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """``svc <args>`` with its output in ``log``: a file, not a pipe, since a full pipe
    would stall the server."""
    with log.open("w") as out:
        return subprocess.Popen([sys.executable, "-m", "app.cli", *args], env=env,
                                stdout=out, stderr=subprocess.STDOUT)


def printed_once_serving(process: subprocess.Popen, log: Path, seconds: float = 90,
                         ready: str = "svc is serving") -> str:
    """What the server printed, once it says it serves (prints ``ready``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        printed = log.read_text()
        if ready in printed:
            return printed
        if process.poll() is not None:
            raise AssertionError(f"svc exited early:\n{printed}")
        time.sleep(0.1)
    raise AssertionError("svc did not start in time")
