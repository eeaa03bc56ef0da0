"""``svc serve --workers N``: N forked worker processes on the sockets the supervisor bound.

The supervisor (the ``svc serve`` process itself) binds the HTTP socket and the
AudioSocket listener, starts the embedded PostgreSQL and migrates, once; then it forks
the workers, each of which serves both sockets on an event loop of its own (the kernel
hands each new connection to one of them). It prints ``svc is serving`` once every
first worker has started, restarts a worker that dies (waiting longer each time one
dies soon after its start, so a crash loop does not spin), and on SIGTERM or SIGINT
sends SIGTERM to every worker, waits for each to drain, and returns so its caller
stops PostgreSQL.

Why fork, not spawn: the workers get the bound sockets by inheritance with nothing to
pass, and start in a moment with every module already imported (their pages shared
until written). It is safe because the supervisor never runs an event loop or a
thread while it forks, beyond the log's flushing thread (its lines are written out
before each fork, and the worker starts its own log): it serves nothing itself and
waits with ``time.sleep``. The sockets keep close-on-exec, so a program a worker runs
(the speech recogniser's subprocesses) never holds them. A worker leaves by ``os._exit``: it must never unwind
into the supervisor's own ``finally`` blocks, which stop the database.
"""

from __future__ import annotations

__all__ = ["Supervisor", "worker_count"]

import ctypes
import logging
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("svc.supervisor")

#: A worker that dies sooner than this after its start counts as a crash in a row.
STEADY_SECONDS = 10.0
#: Waits before restarting a worker after 1, 2, 3... crashes in a row.
RESTART_DELAYS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
PR_SET_PDEATHSIG = 1
#: How often the supervisor looks at its workers and its stop signals.
TICK_SECONDS = 0.1


def worker_count(configured: int) -> int:
    """``server.workers`` (or ``--workers``), 0 meaning one per core we may run on."""
    if configured > 0:
        return configured
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class _Slot:
    """One worker's place: its pid while it runs, and its record of crashes."""

    index: int
    pid: int | None = None
    started: float = 0.0
    crashes: int = 0
    restart_at: float = 0.0


@dataclass
class Supervisor:
    """Runs ``work(index)`` (which returns an exit code) in ``workers`` processes."""

    workers: int
    work: Callable[[int], int]
    #: What a worker is given to drain before it is killed.
    grace_seconds: float = 40.0
    on_ready: Callable[[], None] = lambda: None
    _slots: list[_Slot] = field(default_factory=list)
    _stopping: bool = False
    _ready_read: int = -1
    _ready_write: int = -1
    _supervisor_pid: int = 0

    # -- the worker side ----------------------------------------------------------------

    def _start(self, slot: _Slot) -> None:
        self._supervisor_pid = os.getpid()
        handlers = logging.getLogger().handlers
        # Written out before the fork, or the worker would write the same lines again;
        # and no handler in the middle of a write as the process forks (the log's own
        # thread writes under the handler's lock), or the worker would inherit a
        # buffer half written. The worker's handler locks are new (logging's own
        # at-fork hook); the supervisor lets go of its own.
        for handler in handlers:
            handler.flush()
            handler.acquire()
        pid = os.fork()
        if pid == 0:  # the worker
            self._become_worker(slot.index)
        for handler in handlers:
            handler.release()
        slot.pid, slot.started = pid, time.monotonic()
        log.info("worker started", extra={"worker": slot.index, "pid": pid})

    def _become_worker(self, index: int) -> None:
        code = 1
        try:
            for stop_signal in (signal.SIGTERM, signal.SIGINT):
                signal.signal(stop_signal, _exit_quietly)
            if self._stopping:  # a stop signal came between the fork and the line above
                raise SystemExit(0)
            # A group of its own: Ctrl-C at a terminal reaches the supervisor only, which
            # sends each worker one SIGTERM (uvicorn takes a second signal as "stop
            # now, do not drain").
            os.setpgid(0, 0)
            _end_with(self._supervisor_pid)
            os.close(self._ready_read)
            code = self.work(index)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        except BaseException:  # noqa: BLE001 - reported, then the worker ends
            traceback.print_exc()
        finally:
            _flush_log()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    def ready(self) -> None:
        """Called in a worker once it serves: tells the supervisor."""
        os.write(self._ready_write, b"r")

    # -- the supervisor side ------------------------------------------------------------

    def run(self) -> int:
        self._ready_read, self._ready_write = os.pipe()
        os.set_blocking(self._ready_read, False)
        for stop_signal in (signal.SIGTERM, signal.SIGINT):
            signal.signal(stop_signal, self._stop)
        self._slots = [_Slot(index) for index in range(self.workers)]
        announced, ready = False, 0
        try:
            for slot in self._slots:
                self._start(slot)
            while not self._stopping:
                ready += self._count_ready()
                if not announced and ready >= self.workers:
                    announced = True
                    self.on_ready()
                self._reap()
                self._restart_due()
                time.sleep(TICK_SECONDS)
        finally:
            self._drain()
            os.close(self._ready_read)
            os.close(self._ready_write)
        return 0

    def _stop(self, signum, frame) -> None:
        self._stopping = True

    def _count_ready(self) -> int:
        try:
            return len(os.read(self._ready_read, 4096))
        except BlockingIOError:
            return 0

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            slot = next((s for s in self._slots if s.pid == pid), None)
            if slot is None:  # not a worker (nothing else is forked here)
                continue
            self._died(slot, status)

    def _died(self, slot: _Slot, status: int) -> None:
        now = time.monotonic()
        lived = now - slot.started
        slot.crashes = slot.crashes + 1 if lived < STEADY_SECONDS else 1
        delay = RESTART_DELAYS[min(slot.crashes, len(RESTART_DELAYS)) - 1]
        slot.pid, slot.restart_at = None, now + delay
        log.error("worker died; restarting it", extra={
            "worker": slot.index, "status": _describe(status),
            "lived_seconds": round(lived, 1), "restart_in_seconds": delay})

    def _restart_due(self) -> None:
        now = time.monotonic()
        for slot in self._slots:
            if slot.pid is None and now >= slot.restart_at and not self._stopping:
                self._start(slot)

    def _drain(self) -> None:
        """SIGTERM to each worker, then wait for all; kill what outlives the grace."""
        running = {slot.pid for slot in self._slots if slot.pid is not None}
        for pid in running:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + self.grace_seconds
        while running and time.monotonic() < deadline:
            running = {pid for pid in running if not _ended(pid)}
            if running:
                time.sleep(TICK_SECONDS)
        for pid in running:
            log.error("worker did not drain in time; killed", extra={"pid": pid})
            _signal(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def _end_with(supervisor_pid: int) -> None:
    """Have the kernel send this worker SIGTERM when its supervisor dies (killed with
    SIGKILL, say), so no worker is left serving on its own: it drains and ends."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: nothing to ask
        return
    if os.getppid() != supervisor_pid:  # it died before we asked
        raise SystemExit(0)


def _exit_quietly(signum, frame) -> None:
    raise SystemExit(0)


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _ended(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit {os.waitstatus_to_exitcode(status)}"


def _flush_log() -> None:
    """Write the lines the log still holds: ``os._exit`` skips logging's own shutdown."""
    for handler in logging.getLogger().handlers:
        try:
            handler.flush()
        except Exception:  # noqa: BLE001 - the worker ends either way
            pass
