"""The ``svc`` command: serve, migrate, and account administration from a terminal.

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
from typing import Iterator

from app import config as boot_config
from app.log_format import configure_logging

EX_USAGE, EX_DATAERR, EX_UNAVAILABLE, EX_CANTCREAT, EX_CONFIG = 64, 65, 69, 73, 78


class Exit(Exception):
    """Stop with a one-line message and an exit code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _load_config(args: argparse.Namespace) -> boot_config.BootConfig:
    try:
        boot = boot_config.load(file=args.config)
        overrides = {k: v for k, v in (("server__host", args.host), ("server__port", args.port))
                     if v is not None} if hasattr(args, "host") else {}
        return boot.with_values(**overrides) if overrides else boot
    except (boot_config.ConfigError, ValueError) as exc:
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
    sock.set_inheritable(True)
    return sock


@contextlib.contextmanager
def database_for(boot: boot_config.BootConfig) -> Iterator[str]:
    """The DSN to use: ``database.url``, or the embedded server for as long as we run."""
    if boot["database.url"]:
        yield boot["database.url"]
        return
    from adapters.embedded_postgres import EmbeddedPostgres, EmbeddedPostgresError

    server = EmbeddedPostgres(_writable_data_dir(boot) / "pg")
    try:
        dsn = server.start()
    except EmbeddedPostgresError as exc:
        raise Exit(1, str(exc)) from None
    try:
        yield dsn
    finally:
        server.stop()


async def _prepare(dsn: str, boot: boot_config.BootConfig, announce_first_admin: bool) -> None:
    from app import db
    from app.services.bundle import Services

    db.use_database(dsn)
    await db.migrate()
    if announce_first_admin:
        password = await Services.build(boot).accounts.ensure_first_superadmin()
        if password is not None:
            print("Created the first superadmin: admin@localhost with one-time password "
                  f"{password}\n(shown only now; sign in and change it)", flush=True)


def _exit_quietly(signum, frame) -> None:
    raise SystemExit(0)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.main import create_app
    from app.services.bundle import Services

    boot = _load_config(args)
    configure_logging(boot["log.level"])
    _writable_data_dir(boot)
    sock = _listening_socket(boot["server.host"], boot["server.port"])
    try:
        services = Services.build(boot)
    except ValueError as exc:  # an unusable message_encryption_key
        raise Exit(EX_CONFIG, f"configuration: {exc}") from None
    # A stop signal before or after uvicorn's own handling unwinds through the finally
    # blocks below, so the embedded PostgreSQL is stopped and the exit is a clean 0.
    # While serving, uvicorn drains in-flight requests first, then re-raises the signal
    # to this handler.
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, _exit_quietly)
    with database_for(boot) as dsn:
        asyncio.run(_prepare(dsn, boot, announce_first_admin=True))
        app = create_app(services)
        host, port = sock.getsockname()[:2]

        async def announce(_) -> None:
            print(f"svc is serving on http://{host}:{port}", flush=True)

        app.after_start += announce
        server = uvicorn.Server(uvicorn.Config(
            app, lifespan="on", log_config=None, access_log=False, http="httptools",
            loop="uvloop", timeout_graceful_shutdown=30, proxy_headers=False))
        server.run(sockets=[sock])
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    boot = _load_config(args)
    configure_logging(boot["log.level"])
    with database_for(boot) as dsn:
        asyncio.run(_prepare(dsn, boot, announce_first_admin=False))
    print("migrations applied")
    return 0


def cmd_admin_create(args: argparse.Namespace) -> int:
    from app.http.errors import ApiError
    from app.services.bundle import Services

    boot = _load_config(args)
    configure_logging("warning")
    password = sys.stdin.readline().rstrip("\n") if args.password_stdin else None
    if not password:
        raise Exit(EX_USAGE, "give the password on standard input with --password-stdin")

    async def create(dsn: str) -> None:
        await _prepare(dsn, boot, announce_first_admin=False)
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
    exit 0 when every check passes, 1 otherwise. The listen address is probed over
    TCP, since the listener belongs to the serving process."""
    from app import db
    from app.services.bundle import Services
    from app.telephony.readiness import Readiness, tcp_listening

    boot = _load_config(args)
    configure_logging("warning")
    try:
        services = Services.build(boot)
    except ValueError as exc:  # an unusable message_encryption_key
        raise Exit(EX_CONFIG, f"configuration: {exc}") from None

    async def run(dsn: str) -> list:
        db.use_database(dsn)
        await db.open_pool(2)
        try:
            return await Readiness(services.settings, services.box, tcp_listening).run()
        finally:
            await db.close_pool()

    with database_for(boot) as dsn:
        results = asyncio.run(run(dsn))
    for result in results:
        print(f"{'pass' if result.ok else 'FAIL'}  {result.id:<18}  {result.message}")
    return 0 if all(result.ok for result in results) else 1


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="svc", description="Self-hosted assistant service.")
    top.add_argument("--config", help="TOML configuration file (default: $SVC_CONFIG or ./svc.toml)")
    commands = top.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the service")
    serve.add_argument("--host")
    serve.add_argument("--port")
    serve.set_defaults(run=cmd_serve)

    migrate = commands.add_parser("migrate", help="apply database migrations and exit")
    migrate.set_defaults(run=cmd_migrate)

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
