"""The server of the call-load benchmark: ``svc serve`` with instant speech engines.

The same application, settings and database as ``svc serve`` — uvicorn with uvloop
and httptools, the AudioSocket listener bound at start — with one change: every call
gets instant fake engines, so the figures are the service's own work and none of an
engine's. The synthesiser returns ``MS_PER_CHARACTER`` of a steady tone per character
at once, a second at a time; the recogniser hears nothing (the benchmark's callers are
silent, so no turn starts and the model is never asked).

Run by ``benchmarks/call_load.py``:
``python -m benchmarks.call_load_server --dsn … --port … --data-dir … [--cpu 0]``;
prints the first superadmin's one-time password, then ``svc is serving``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import struct

MS_PER_CHARACTER = 100
_RATE = 8000
# One second of a 440 Hz tone at a speaking level, repeated as long as the text needs.
TONE = struct.pack(f"<{_RATE}h", *(int(6000 * math.sin(2 * math.pi * 440 * n / _RATE))
                                    for n in range(_RATE)))


class InstantSynthesiser:
    sample_rate = _RATE

    async def stream(self, text: str):
        # A second at a time, as a streaming synthesiser gives it, all at once.
        wanted = len(text) * MS_PER_CHARACTER * _RATE // 1000 * 2
        for start in range(0, wanted, len(TONE)):
            yield TONE[:wanted - start]


class DeafRecogniser:
    async def transcribe(self, pcm16: bytes, sample_rate: int) -> str:
        return ""


def _supervise(workers: int, sock, pbx_listen: str | None, served, serving) -> None:
    """``workers`` forked workers on ``sock`` and one AudioSocket listener bound here,
    as ``svc serve --workers N`` runs them (``app.cli``, ``app.supervisor``)."""
    from app.log_format import configure_logging
    from app.supervisor import Supervisor
    from app.telephony.audio_listener import bind_for_workers

    audio_listener = bind_for_workers(pbx_listen)

    def work(index: int) -> int:
        configure_logging("warning")
        served(supervisor.ready, pool_size=max(4, 40 // workers),
               scheduled_jobs=index == 0, audio_listener=audio_listener).run(sockets=[sock])
        return 0

    supervisor = Supervisor(workers, work, on_ready=serving)
    supervisor.run()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--cpu", type=int, help="pin the server to this CPU")
    parser.add_argument("--profile", help="write cProfile statistics of the serving here")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes, forked as by svc serve --workers N")
    args = parser.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})

    import uvicorn

    from app import db
    from app.bundle import Services
    from app.cli import _listening_socket
    from app.config import BootConfig
    from app.log_format import configure_logging
    from app.main import create_app
    from app.telephony.speech_engines import CallEngines

    boot = BootConfig({"database.url": args.dsn, "storage.data_dir": args.data_dir,
                       "storage.recordings_dir": os.path.join(args.data_dir, "recordings"),
                       "message_encryption_key": "0" * 64, "log.level": "warning"})
    configure_logging("warning")

    def instant_services() -> Services:
        services = Services.build(boot)

        async def instant() -> CallEngines:
            return CallEngines(synthesiser=InstantSynthesiser(), recogniser=DeafRecogniser())

        services.call_voice.engines = instant
        return services

    async def prepare() -> str | None:
        db.use_database(args.dsn)
        await db.migrate()
        services = Services.build(boot)
        password = await services.accounts.ensure_first_superadmin()
        if password is not None:
            print(f"one-time password {password}", flush=True)
        return await services.settings.get("telephony.pbx_listen")

    pbx_listen = asyncio.run(prepare())
    sock = _listening_socket("127.0.0.1", args.port)

    def served(ready, **options) -> uvicorn.Server:
        app = create_app(instant_services(), collect_on_beat=True, **options)

        async def announce(_) -> None:
            ready()

        app.after_start += announce
        return uvicorn.Server(uvicorn.Config(app, lifespan="on", log_config=None,
                                             access_log=False, http="httptools",
                                             loop="uvloop"))

    def serving() -> None:
        print("svc is serving", flush=True)

    if args.workers > 1:
        _supervise(args.workers, sock, pbx_listen, served, serving)
        return
    server = served(serving)
    if not args.profile:
        server.run(sockets=[sock])
        return
    import cProfile
    import signal

    def stop(signum, frame) -> None:
        raise SystemExit(0)

    # uvicorn raises the stop signal again once it has shut down: end through the
    # finally below, so the statistics are written.
    signal.signal(signal.SIGTERM, stop)
    profile = cProfile.Profile()
    try:
        profile.runcall(server.run, sockets=[sock])
    finally:
        profile.dump_stats(args.profile)


if __name__ == "__main__":
    main()
