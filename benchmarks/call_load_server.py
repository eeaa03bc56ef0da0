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
_TONE = struct.pack(f"<{_RATE}h", *(int(6000 * math.sin(2 * math.pi * 440 * n / _RATE))
                                    for n in range(_RATE)))


class InstantSynthesiser:
    sample_rate = _RATE

    async def stream(self, text: str):
        # A second at a time, as a streaming synthesiser gives it, all at once.
        wanted = len(text) * MS_PER_CHARACTER * _RATE // 1000 * 2
        for start in range(0, wanted, len(_TONE)):
            yield _TONE[:wanted - start]


class DeafRecogniser:
    async def transcribe(self, pcm16: bytes, sample_rate: int) -> str:
        return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--cpu", type=int, help="pin the server to this CPU")
    parser.add_argument("--profile", help="write cProfile statistics of the serving here")
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
    services = Services.build(boot)

    async def instant() -> CallEngines:
        return CallEngines(synthesiser=InstantSynthesiser(), recogniser=DeafRecogniser())

    services.call_voice.engines = instant

    async def prepare() -> None:
        db.use_database(args.dsn)
        await db.migrate()
        password = await services.accounts.ensure_first_superadmin()
        if password is not None:
            print(f"one-time password {password}", flush=True)

    asyncio.run(prepare())
    app = create_app(services, collect_on_beat=True)

    async def announce(_) -> None:
        print("svc is serving", flush=True)

    app.after_start += announce
    sock = _listening_socket("127.0.0.1", args.port)
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_config=None,
                                           access_log=False, http="httptools", loop="uvloop"))
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
