"""The loopback fakes as whole processes, as the benchmarks start them: each says its
port once ready, answers there, and ends quietly when interrupted, even when started
by a process that ignores interrupts."""

from __future__ import annotations

import signal
import subprocess
import sys

import httpx
import pytest


@pytest.mark.parametrize(("module", "path", "body"), [
    ("tests.fakes.upstream", "/v1/chat/completions",
     {"model": "fake-small", "messages": [{"role": "user", "content": "Hi"}]}),
    ("tests.fakes.speech", "/turn", {"text": "Yes."}),
    ("benchmarks.lean_upstream", "/v1/chat/completions",
     {"model": "fake-small", "messages": [{"role": "user", "content": "Hi"}]}),
])
@pytest.mark.parametrize("interrupts_ignored", [False, True])
def test_a_fake_says_its_port_answers_there_and_ends_quietly_on_interrupt(
        module, path, body, interrupts_ignored):
    command = [sys.executable, "-m", module, "--port", "0"]
    if interrupts_ignored:  # as if started by a process that ignores them: inherited
        command = [sys.executable, "-c", (
            "import os, signal, sys\n"
            "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            f"os.execv(sys.executable, {command!r})\n")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        ready = process.stdout.readline()
        assert ready.startswith("listening on "), ready + process.stderr.read()
        port = int(ready.split()[-1])
        answer = httpx.post(f"http://127.0.0.1:{port}{path}", json=body, timeout=30)
        assert answer.status_code == 200, answer.text
    finally:
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=30)
    assert process.returncode == 0 and "Traceback" not in errors, errors
