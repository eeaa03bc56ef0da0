"""The ``svc`` command: serve, migrate, back up and restore the database, and account
administration from a terminal.

Exit codes follow sysexits: 64 usage, 65 bad input, 69 address in use, 73 data
directory not writable, 78 configuration error, 1 anything else. Every refusal is one
line on standard error saying what to do.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from app import config as boot_config
from app.log_format import configure_logging
from app.message_key import StartKey, key_file, key_for_start
from core.host_port import InvalidHostPort, parse_host_port

if TYPE_CHECKING:
    from app.bundle import Services

EX_USAGE, EX_DATAERR, EX_UNAVAILABLE, EX_CANTCREAT, EX_CONFIG = 64, 65, 69, 73, 78


class Exit(Exception):
    """Stop with a one-line message and an exit code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _load_config(args: argparse.Namespace, *, make_key: bool = False) -> StartKey:
    """The boot configuration with the message encryption key in force (made in the
    data directory on a first ``serve`` with the embedded database)."""
    try:
        boot = boot_config.load(file=args.config)
        overrides = {k: v for k, v in (("server__host", args.host), ("server__port", args.port))
                     if v is not None} if hasattr(args, "host") else {}
        boot = boot.with_values(**overrides) if overrides else boot
    except (boot_config.ConfigError, ValueError) as exc:
        raise Exit(EX_CONFIG, f"configuration: {exc}") from None
    if make_key:
        _writable_data_dir(boot)
    try:
        return key_for_start(boot, make=make_key)
    except OSError as exc:
        raise Exit(EX_CANTCREAT, f"cannot keep the message encryption key in "
                                 f"{key_file(boot)}: {exc.strerror or exc}") from None


def _services(boot: boot_config.BootConfig) -> Services:
    """The service bundle for a command that acts at once; an unusable
    message_encryption_key is a configuration error, said in one line."""
    from app.bundle import Services

    try:
        return Services.build(boot)
    except ValueError as exc:
        raise Exit(EX_CONFIG, f"configuration: {exc}") from None


def _writable_data_dir(boot: boot_config.BootConfig) -> Path:
    data_dir = boot.data_dir
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        probe = data_dir / ".write-check"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise Exit(EX_CANTCREAT, f"data directory {data_dir} is not writable: "
                                 f"{exc.strerror or exc}") from None
    return data_dir


def _listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise Exit(EX_UNAVAILABLE, f"cannot listen on {host}:{port}: the port is taken "
                                       "(stop the other process or set SVC__SERVER__PORT)") from None
        raise Exit(EX_UNAVAILABLE, f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    # Close-on-exec (Python's default, kept): workers are forked and inherit it anyway,
    # and no program a worker runs may hold the listening socket.
    return sock


def embedded_pgdata(boot: boot_config.BootConfig) -> Path:
    """Where the embedded PostgreSQL keeps its cluster."""
    return boot.data_dir / "pg"


@contextlib.contextmanager
def database_for(boot: boot_config.BootConfig) -> Iterator[str]:
    """The DSN to use: ``database.url``, or the embedded server for as long as we run.
    The embedded server is shared: a command run beside ``svc serve`` uses the server
    it runs, and leaves it running."""
    if boot["database.url"]:
        yield boot["database.url"]
        return
    from adapters.embedded_postgres import (DataVersionMismatch, EmbeddedPostgres,
                                            EmbeddedPostgresError)

    _writable_data_dir(boot)
    server = EmbeddedPostgres(embedded_pgdata(boot))
    try:
        dsn = server.start()
    except DataVersionMismatch as exc:
        raise Exit(1, f"the database in {exc.pgdata} was made by PostgreSQL "
                      f"{exc.data_version} and this svc runs PostgreSQL {exc.server_version}: "
                      f"back it up with `svc backup` under the svc that ran PostgreSQL "
                      f"{exc.data_version}, move {exc.pgdata} aside, and `svc restore` the "
                      f"backup under this one") from None
    except EmbeddedPostgresError as exc:
        raise Exit(1, str(exc)) from None
    try:
        yield dsn
    finally:
        server.stop()


async def _prepare(dsn: str, start: StartKey, announce_first_admin: bool) -> None:
    from app import db
    from app.bundle import Services
    from app.crypto import SecretBox
    from app.message_key import KeyMismatch, made_notice, verify_key

    boot = start.boot
    db.use_database(dsn)
    await db.migrate()
    try:
        await verify_key(SecretBox(boot["message_encryption_key"]), boot)
    except KeyMismatch as exc:
        if start.made is not None:  # a key made just now for a database that has one
            start.made.unlink(missing_ok=True)
        raise Exit(EX_CONFIG, str(exc)) from None
    if start.made is not None:
        print(made_notice(start.made), flush=True)
    if announce_first_admin:
        password = await Services.build(boot).accounts.ensure_first_superadmin()
        if password is not None:
            print("Created the first superadmin: admin@localhost with one-time password "
                  f"{password}\n(shown only now; sign in and change it)", flush=True)


def _exit_quietly(signum, frame) -> None:
    raise SystemExit(0)


def _serve_here(sock: socket.socket, services, *, ready, pool_size: int = 20,
                scheduled_jobs: bool = True, audio_listener=None) -> None:
    """Serve the application on ``sock`` in this process until a stop signal; ``ready``
    runs once it serves."""
    import uvicorn

    from app.main import create_app
    from app.serving import server_config

    app = create_app(services, pool_size=pool_size, scheduled_jobs=scheduled_jobs,
                     audio_listener=audio_listener, collect_on_beat=True)

    async def announce(_) -> None:
        ready()

    app.after_start += announce
    server = uvicorn.Server(server_config(app, services.boot, loop="uvloop",
                                          timeout_graceful_shutdown=30))
    server.run(sockets=[sock])


def _worker_pool_size(workers: int) -> int:
    """Each worker's pool: 20 connections for one or two workers, fewer for more, so a
    host's workers together hold about as many as a few processes would."""
    return max(4, min(20, 40 // workers))


async def _pbx_listen_address(boot: boot_config.BootConfig) -> str | None:
    from app.bundle import Services

    return await Services.build(boot).settings.get("telephony.pbx_listen")


def _supervise(sock: socket.socket, boot: boot_config.BootConfig, workers: int,
               announce) -> int:
    """Fork ``workers`` workers on ``sock`` and the AudioSocket listener bound here."""
    from app.bundle import Services
    from app.supervisor import Supervisor
    from app.telephony.audio_listener import bind_for_workers

    audio_listener = bind_for_workers(asyncio.run(_pbx_listen_address(boot)))

    def work(index: int) -> int:
        configure_logging(boot["log.level"])  # the log's flushing thread stayed behind
        # The scheduled jobs (the daily sweep, the outbox worker) run in worker 0 only,
        # restarted in its place if it dies; each also guards itself across hosts.
        _serve_here(sock, Services.build(boot), ready=supervisor.ready,
                    pool_size=_worker_pool_size(workers), scheduled_jobs=index == 0,
                    audio_listener=audio_listener)
        return 0

    supervisor = Supervisor(workers, work, on_ready=announce)
    return supervisor.run()


def cmd_serve(args: argparse.Namespace) -> int:
    from app.supervisor import worker_count

    start = _load_config(args, make_key=True)
    boot = start.boot
    configure_logging(boot["log.level"])
    workers = worker_count(args.workers if args.workers is not None
                           else boot["server.workers"])
    sock = _listening_socket(boot["server.host"], boot["server.port"])
    services = _services(boot)
    # A stop signal before or after uvicorn's own handling unwinds through the finally
    # blocks below, so the embedded PostgreSQL is stopped and the exit is a clean 0.
    # While serving, uvicorn drains in-flight requests first, then re-raises the signal
    # to this handler. With workers, the supervisor drains them all first.
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, _exit_quietly)
    with database_for(boot) as dsn:
        asyncio.run(_prepare(dsn, start, announce_first_admin=True))
        host, port = sock.getsockname()[:2]

        def announce() -> None:
            many = f" ({workers} workers)" if workers > 1 else ""
            print(f"svc is serving on http://{host}:{port}{many}", flush=True)

        if workers > 1:
            return _supervise(sock, boot, workers, announce)
        _serve_here(sock, services, ready=announce)
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    start = _load_config(args)
    configure_logging(start.boot["log.level"])
    with database_for(start.boot) as dsn:
        asyncio.run(_prepare(dsn, start, announce_first_admin=False))
    print("migrations applied")
    return 0


def cmd_admin_create(args: argparse.Namespace) -> int:
    from app.bundle import Services
    from app.errors import ApiError

    start = _load_config(args)
    boot = start.boot
    configure_logging("warning")
    password = sys.stdin.readline().rstrip("\n") if args.password_stdin else None
    if not password:
        raise Exit(EX_USAGE, "give the password on standard input with --password-stdin")

    async def create(dsn: str) -> None:
        await _prepare(dsn, start, announce_first_admin=False)
        try:
            row = await Services.build(boot).accounts.create(args.email, password, args.role)
        except ApiError as exc:
            raise Exit(EX_DATAERR, exc.message) from None
        print(f"created {row['role']} {row['email']} ({row['id']})")

    with database_for(boot) as dsn:
        asyncio.run(create(dsn))
    return 0


def cmd_telephony_check(args: argparse.Namespace) -> int:
    """The readiness checks of /api/admin/telephony/preflight, printed one a line;
    exit 0 when every check passes, 1 otherwise. The listen address is judged by what
    the serving processes' leases say they listen on; this one serves nothing."""
    from app import db
    from app.telephony.process_listeners import process_listeners
    from app.telephony.readiness import Readiness

    boot = _load_config(args).boot
    configure_logging("warning")
    services = _services(boot)

    async def run(dsn: str) -> list:
        db.use_database(dsn)
        await db.open_pool(2)
        try:
            return await Readiness(services.settings, services.box, process_listeners).run()
        finally:
            await db.close_pool()

    with database_for(boot) as dsn:
        results = asyncio.run(run(dsn))
    for result in results:
        print(f"{'pass' if result.ok else 'FAIL'}  {result.id:<18}  {result.message}")
    return 0 if all(result.ok for result in results) else 1


def _database_named(boot: boot_config.BootConfig) -> str:
    """The database a backup or restore works on, for its messages (never the URL,
    which may hold a password)."""
    return "the database at database.url" if boot["database.url"] else \
        f"the database in {embedded_pgdata(boot)}"


def cmd_backup(args: argparse.Namespace) -> int:
    """The database, whole and consistent, in FILE, while svc goes on serving."""
    from adapters.pg_archive import ArchiveError, dump, written_whole
    from app.message_key import backup_notice

    start = _load_config(args)
    boot = start.boot
    configure_logging("warning")
    target = Path(args.file).absolute()
    if not boot["database.url"] and not (embedded_pgdata(boot) / "PG_VERSION").is_file():
        raise Exit(1, f"there is no database in {embedded_pgdata(boot)} to back up "
                      "(is storage.data_dir the one svc serves from?)")
    try:
        with written_whole(target) as partial, database_for(boot) as dsn:
            dump(dsn, partial)
    except ArchiveError as exc:
        raise Exit(1, f"the backup failed and {target} was not written: {exc}") from None
    except OSError as exc:
        raise Exit(EX_CANTCREAT, f"cannot write the backup to {target}: "
                                 f"{exc.strerror or exc}") from None
    print(f"backed up {_database_named(boot)} to {target}")
    print(backup_notice(start))
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """A backup into a database that holds no svc tables yet. FILE and the target are
    checked before anything is written; the restore is one transaction."""
    from adapters.pg_archive import ArchiveError, NotAnArchive, archived_tables, restore
    from app import db
    from app.message_key import restore_notice

    start = _load_config(args)
    boot = start.boot
    configure_logging("warning")
    archive = Path(args.file).absolute()
    try:
        tables = archived_tables(archive)
    except NotAnArchive as exc:
        raise Exit(EX_DATAERR, str(exc)) from None
    if ("public", "migration") not in tables:  # Piccolo's record of applied migrations
        raise Exit(EX_DATAERR, f"{archive} is a pg_dump archive, but not of svc's database")
    target = _database_named(boot)

    async def tables_present(dsn: str) -> list[str]:
        db.use_database(dsn)
        return await db.tables_present(tables)

    with database_for(boot) as dsn:
        present = asyncio.run(tables_present(dsn))
        if present:
            some = ", ".join(present[:3]) + (", ..." if len(present) > 3 else "")
            raise Exit(EX_DATAERR, f"{target} already holds svc's tables ({some}), so "
                                   "nothing was restored: restore into a fresh data "
                                   "directory or an empty database")
        try:
            restore(archive, dsn)
        except ArchiveError as exc:
            raise Exit(1, f"the restore failed and {target} is as it was: {exc}") from None
    print(f"restored {archive} into {target}; migrations newer than the backup apply "
          "when svc next starts")
    print(restore_notice(start))
    return 0


def _worker_option(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 256:
        raise argparse.ArgumentTypeError("give a number of workers from 1 to 256 "
                                         "(0 = one per core)")
    return int(text)


class _Utterance(argparse.Action):
    """--say and --play keep their order on the command line: the caller speaks them
    one after the other."""

    def __call__(self, parser, namespace, value, option_string=None) -> None:
        utterances = list(getattr(namespace, "utterances", None) or [])
        utterances.append((self.const, value))
        namespace.utterances = utterances


def _caller_script(args: argparse.Namespace) -> list:
    from adapters.call_simulator import AudioFileError, Listen, Play, Press, Say, read_wav

    listen = Listen(quiet_ms=args.quiet_ms, timeout_s=args.listen_secs)
    steps: list = [] if args.over_opening else [listen]
    for kind, value in args.utterances or []:
        if kind == "say":
            steps.append(Say(value))
        elif kind == "press":
            steps.extend(Press(key) for key in value)
        else:
            try:
                steps.append(Play(read_wav(Path(value)), label=Path(value).name))
            except AudioFileError as exc:
                raise Exit(EX_DATAERR, str(exc)) from None
        steps.append(listen)
    return steps


def _at_telephone_level(steps: list, args: argparse.Namespace) -> list:
    """The caller's speech at the asked level and noise (``--level-dbfs``,
    ``--noise-snr``), as a telephone line would carry it."""
    from adapters.call_simulator import Play, at_telephone_level

    if args.level_dbfs is None and args.noise_snr is None:
        return steps
    return [Play(at_telephone_level(step.pcm, args.level_dbfs, args.noise_snr, seed=index),
                 step.label) if isinstance(step, Play) else step
            for index, step in enumerate(steps)]


def _audiosocket_address(text: str | None) -> tuple[str, int]:
    try:
        return parse_host_port(text or "")
    except InvalidHostPort as exc:
        raise Exit(EX_USAGE, f"give the AudioSocket listen address as --audiosocket HOST:PORT "
                             f"(the server's telephony.pbx_listen): {exc}") from None


#: The simulated caller's voice: unlike the line's default one, so the two are told
#: apart; PocketSphinx hears it far better than eSpeak NG's male voices.
CALLER_VOICE = "en-us+f2"


def _local_synthesiser(voice: str):
    """eSpeak NG, the local synthesiser a fresh install has, in the caller's ``voice``."""
    try:
        from adapters.speech.local import LocalSynthesiser
    except ImportError as exc:
        raise Exit(EX_UNAVAILABLE, f"local synthesis (eSpeak NG) is not available ({exc}); "
                                   "use --play with a WAV file instead") from None
    return LocalSynthesiser(voice)


def _local_recogniser():
    """PocketSphinx when it is installed; None otherwise (no transcript is printed)."""
    try:
        from adapters.speech.local import LocalRecogniser
    except ImportError:
        print("local recognition (PocketSphinx) is not available: no transcript",
              file=sys.stderr)
        return None
    return LocalRecogniser()


async def _simulate(args: argparse.Namespace) -> int:
    import aiohttp

    from adapters.call_simulator import Caller, prepare, ring_carrier, ring_pbx, transcribe
    from adapters.call_simulator.summary import describe
    from adapters.speech import SpeechUnavailable

    steps = _caller_script(args)
    saying = any(k == "say" for k, _ in args.utterances or [])
    synthesiser = _local_synthesiser(args.voice) if saying else None
    try:
        caller = Caller(_at_telephone_level(await prepare(steps, synthesiser), args))
    except SpeechUnavailable as exc:
        raise Exit(EX_UNAVAILABLE, f"local synthesis failed: {exc}") from None
    common = {"server_url": args.server, "caller_number": args.caller, "dialled": args.to,
              "caller": caller}
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None,
                                                                       sock_connect=10)) as http:
            if args.via == "pbx":
                report = await ring_pbx(audiosocket=_audiosocket_address(args.audiosocket),
                                        secret=args.secret or "", http=http, rate=args.rate,
                                        **common)
            else:
                report = await ring_carrier(public_base=args.public_url,
                                            credential=args.credential or "", http=http,
                                            **common)
    except (aiohttp.ClientError, OSError) as exc:
        raise Exit(EX_UNAVAILABLE, f"cannot reach the line: {exc}") from None
    if not args.no_transcript:
        recogniser = _local_recogniser()
        if recogniser is not None:
            await transcribe(report, recogniser)
    print(describe(report))
    if args.save and report.answered:
        from adapters.call_simulator import write_wav

        write_wav(Path(args.save), report.heard)
        print(f"saved what the line said to {args.save}")
    return 0 if report.answered and report.fault is None else 1


def cmd_call_simulate(args: argparse.Namespace) -> int:
    """Ring a line on a running server as its telephone network would."""
    configure_logging("warning")
    if args.via == "carrier" and not args.credential:
        raise Exit(EX_USAGE, "give the stored carrier credential with --credential")
    if args.rate != 8000 and args.via != "pbx":
        raise Exit(EX_USAGE, "--rate is the AudioSocket channel's: only with --via pbx "
                             "(a carrier's stream is 8 kHz)")
    if args.via == "pbx":
        _audiosocket_address(args.audiosocket)
        if not args.secret:
            raise Exit(EX_USAGE, "give the shared secret with --secret")
    import anyio

    return anyio.run(_simulate, args)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="svc", description="Self-hosted assistant service.")
    top.add_argument("--config", help="TOML configuration file (default: $SVC_CONFIG or ./svc.toml)")
    commands = top.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the service")
    serve.add_argument("--host")
    serve.add_argument("--port")
    serve.add_argument("--workers", type=_worker_option, metavar="N",
                       help="worker processes (default: server.workers, 0 = one per core)")
    serve.set_defaults(run=cmd_serve)

    migrate = commands.add_parser("migrate", help="apply database migrations and exit")
    migrate.set_defaults(run=cmd_migrate)

    database_files = (
        ("backup", cmd_backup, "back up the database to FILE, while svc serves",
         "Write the whole database, as it is at one moment, to FILE (pg_dump's custom "
         "format, readable by this user only) while svc goes on serving. FILE is replaced "
         "only once the backup is complete. The message encryption key is not in it: "
         "keep that apart."),
        ("restore", cmd_restore, "restore a backup into a database with no svc tables yet",
         "Restore FILE, made by svc backup, into the embedded database of a fresh "
         "storage.data_dir or into an empty database at database.url. Refused, with "
         "nothing changed, when the database already holds svc's tables or FILE is not "
         "such a backup."),
    )
    for name, run, summary, description in database_files:
        command = commands.add_parser(name, help=summary, description=description)
        command.add_argument("file", metavar="FILE")
        command.set_defaults(run=run)

    admin = commands.add_parser("admin", help="account administration").add_subparsers(
        dest="admin_command", required=True)
    create = admin.add_parser("create", help="create an account")
    create.add_argument("--email", required=True)
    create.add_argument("--password-stdin", action="store_true",
                        help="read the password from the first line of standard input")
    create.add_argument("--role", default="user", choices=("user", "admin", "superadmin"))
    create.set_defaults(run=cmd_admin_create)

    telephony = commands.add_parser("telephony", help="telephone lines").add_subparsers(
        dest="telephony_command", required=True)
    check = telephony.add_parser("check", help="run the telephony readiness checks")
    check.set_defaults(run=cmd_telephony_check)

    call = commands.add_parser("call", help="telephone calls").add_subparsers(
        dest="call_command", required=True)
    simulate = call.add_parser(
        "simulate", help="ring a line on a running server as its telephone network would",
        description="Ring a line as a Twilio-compatible carrier (--via carrier) or as "
                    "Asterisk with AudioSocket (--via pbx), wait for the opening, say each "
                    "--say (local synthesis) or --play (a WAV file) in turn and listen to "
                    "the reply, then hang up. Prints what was said with a transcript (local "
                    "recognition) and how long each reply took.")
    simulate.add_argument("--via", choices=("carrier", "pbx"), required=True)
    simulate.add_argument("--to", required=True, help="the line's number, E.164")
    simulate.add_argument("--from", dest="caller", default="+441632960777",
                          help="the calling number (default %(default)s)")
    simulate.add_argument("--server", default="http://127.0.0.1:8080",
                          help="where the server answers HTTP (default %(default)s)")
    simulate.add_argument("--public-url", help="carrier: the public address the server is "
                          "configured with, which the carrier signs (default: --server)")
    simulate.add_argument("--credential", help="carrier: the stored carrier credential")
    simulate.add_argument("--audiosocket", help="pbx: the AudioSocket listen address, HOST:PORT")
    simulate.add_argument("--secret", help="pbx: the shared secret")
    simulate.add_argument("--say", action=_Utterance, const="say", metavar="TEXT",
                          help="say this (repeatable; in order with --play)")
    simulate.add_argument("--voice", default=CALLER_VOICE,
                          help="the eSpeak NG voice --say speaks in (default %(default)s: "
                               "not the line's own, and heard well by local recognition)")
    simulate.add_argument("--play", action=_Utterance, const="play", metavar="WAV",
                          help="play this 16-bit WAV file (repeatable)")
    simulate.add_argument("--press", action=_Utterance, const="press", metavar="KEYS",
                          help="press keys (0-9, *, #), in turn with --say and --play")
    simulate.add_argument("--rate", type=int, default=8000,
                          choices=(8000, 12000, 16000, 24000, 32000, 44100, 48000, 96000,
                                   192000),
                          help="pbx: the channel's rate; above 8000 the caller's audio goes "
                               "in the channel driver's higher-rate kinds (16000: slin16)")
    simulate.add_argument("--level-dbfs", type=float, metavar="DB",
                          help="play the caller's speech at this active level, e.g. -26")
    simulate.add_argument("--noise-snr", type=float, metavar="DB",
                          help="add white noise this far below the caller's speech level")
    simulate.add_argument("--over-opening", action="store_true",
                          help="speak at once, over the opening, instead of after it")
    simulate.add_argument("--quiet-ms", type=int, default=1200,
                          help="quiet after the line's speech that ends a reply "
                               "(default %(default)s)")
    simulate.add_argument("--listen-secs", type=float, default=30.0,
                          help="longest wait for each reply (default %(default)s)")
    simulate.add_argument("--save", metavar="WAV", help="save what the line said here")
    simulate.add_argument("--no-transcript", action="store_true",
                          help="skip local recognition of what the line said")
    simulate.set_defaults(run=cmd_call_simulate, utterances=[])
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except Exit as stop:
        print(f"svc: {stop}", file=sys.stderr)
        return stop.code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
