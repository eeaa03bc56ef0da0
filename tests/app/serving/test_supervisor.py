"""The supervisor of ``svc serve --workers N`` on its own, with workers that only sleep
or crash: restarts wait longer for each crash in a row, a worker's last lines are
written, and no worker outlives it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent("""
    import logging, os, sys, time
    from app.log_format import configure_logging
    from app.supervisor import Supervisor

    configure_logging("info")

    def work(index):
        if sys.argv[1] == "crash":
            logging.getLogger("svc.test").info("leaving", extra={"worker": index})
            return 3
        # One write a line: two workers share the pipe, and print() may split a line.
        os.write(1, f"worker {os.getpid()}\\n".encode())
        supervisor.ready()
        while True:
            time.sleep(1)

    supervisor = Supervisor(2, work, grace_seconds=5,
                            on_ready=lambda: os.write(1, b"ready\\n"))
    sys.exit(supervisor.run())
""")


def _supervise(mode: str, log: Path) -> tuple[subprocess.Popen, object]:
    out = log.open("w")
    process = subprocess.Popen([sys.executable, "-c", SCRIPT, mode], stdout=subprocess.PIPE,
                               stderr=out, text=True)
    return process, out


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def test_workers_end_when_the_supervisor_is_killed(tmp_path):
    process, out = _supervise("sleep", tmp_path / "log")
    workers: set[int] = set()
    try:
        printed = [process.stdout.readline() for _ in range(3)]
        assert printed[2] == "ready\n", printed + [(tmp_path / "log").read_text()]
        workers = {int(line.split()[1]) for line in printed[:2]}
        process.kill()
        process.wait()
        deadline = time.monotonic() + 30
        while not all(_gone(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(_gone(pid) for pid in workers)
    finally:
        out.close()
        for pid in workers:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_crashing_worker_is_restarted_ever_more_slowly_and_sigterm_stops(tmp_path):
    log = tmp_path / "log"
    process, out = _supervise("crash", log)
    try:
        deadline = time.monotonic() + 60
        delays: list[float] = []
        while time.monotonic() < deadline:
            lines = [json.loads(line) for line in log.read_text().splitlines()
                     if line.startswith("{")]
            delays = [line["restart_in_seconds"] for line in lines
                      if line["message"] == "worker died; restarting it" and line["worker"] == 0]
            if len(delays) >= 3:
                break
            time.sleep(0.1)
        assert delays[:3] == [0.5, 1.0, 2.0]
        assert all(line["status"] == "exit 3" for line in lines if "status" in line)
        # What a worker logged just before it ended was written, not lost with it.
        assert sum(line["message"] == "leaving" for line in lines) >= 3
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        out.close()
        if process.poll() is None:
            process.kill()


def test_the_default_is_one_worker_per_core_we_may_run_on():
    from app.supervisor import worker_count

    assert worker_count(0) == len(os.sched_getaffinity(0))
    assert worker_count(3) == 3


def test_a_bad_number_of_workers_is_a_usage_error(capsys):
    from app.cli import parser

    with pytest.raises(SystemExit) as refused:
        parser().parse_args(["serve", "--workers", "many"])
    assert refused.value.code == 2 and "number of workers" in capsys.readouterr().err
