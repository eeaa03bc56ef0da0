"""The bare relay of the ``/v1`` benchmark in several processes
(``benchmarks/minimal_relay.py --processes N``), the side that is compared with
``svc serve --workers N``: it says it listens once every process serves, runs that
many, and ends them all on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from tests.support.processes import children, printed_once_serving


def test_the_relay_forks_its_processes_on_one_socket_and_stops_them(tmp_path):
    log = tmp_path / "relay.log"
    with log.open("w") as out:
        relay = subprocess.Popen([sys.executable, "-m", "benchmarks.minimal_relay",
                                  "--upstream", "http://127.0.0.1:9/v1", "--processes", "2"],
                                 stdout=out, stderr=subprocess.STDOUT,
                                 cwd=Path(__file__).resolve().parents[2])
    try:
        printed = printed_once_serving(relay, log, seconds=60, ready="listening on")
        assert printed.count("listening on") == 1
        workers = children(relay.pid)
        assert len(workers) == 2
        relay.send_signal(signal.SIGTERM)
        assert relay.wait(timeout=60) == 0
        assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
    finally:
        if relay.poll() is None:
            relay.kill()
            relay.wait()
