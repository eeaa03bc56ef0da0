"""Stopping a server process started by a test or a benchmark."""

from __future__ import annotations

import signal
import subprocess


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
