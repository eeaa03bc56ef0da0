"""Composition root: build the application from boot configuration.

``create_app`` wires one concern per ``configure_*`` call: services, errors, the
request middleware, routes, OpenAPI docs, and the database pool's lifecycle.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from blacksheep import Application, Request, Router


from app import console, db
from app.console.pages import configure_console
from app.errors import NotFound
from app.http.docs import configure_docs
from app.http.errors import configure_errors
from app.http.front_door import FrontDoorApplication
from app.http.middleware import RequestContext
from app.http.query_values import UsableQuery
from app.http.same_origin import SameOriginWrites
from app.log_format import write_log_from
from app.public_api.gate import PublicApiGate
from app.scheduler import start_scheduler
from app.routes import (
    admin_audit,
    admin_settings,
    admin_tools,
    admin_users,
    agents,
    api_keys,
    auth,
    chats,
    conflict_names,
    diary,
    enquiries,
    health,
    libraries,
    line_conversation,
    notify_targets,
    projects,
    providers,
    telephony_admin,
    telephony_calls,
    telephony_carrier,
    telephony_media,
    telephony_pbx,
    tool_offers,
    usage,
    v1,
)
from app.bundle import Services
from app.services.sessions import COOKIE_NAME
from app.telephony.audio_listener import AudioListener, BoundListener

ROUTE_MODULES = (
    health,
    auth,
    admin_users,
    admin_settings,
    admin_audit,
    projects,
    agents,
    libraries,
    providers,
    usage,
    api_keys,
    v1,
    chats,
    admin_tools,
    tool_offers,
    telephony_admin,
    telephony_carrier,
    telephony_pbx,
    console,
    diary,
    conflict_names,
    enquiries,
    telephony_media,
    notify_targets,
    telephony_calls,
    line_conversation,
)


async def _not_found(request: Request):
    raise NotFound(f"No resource at {request.url.path.decode('latin-1')}.")


def configure_routes(app: FrontDoorApplication, router: Router,
                     services: Services) -> None:
    for module in ROUTE_MODULES:
        module.register(router)
    v1.register_direct(app.direct_routes, services)
    # Unmatched paths go through the middlewares too, so they carry a request id and
    # our error shape (BlackSheep answers a bare 404 when no fallback is set).
    router.fallback = _not_found


def configure_database(app: Application, services: Services, pool_size: int) -> None:
    """The pools, and the change notices that keep the API keys' cache true."""

    async def open_pool(_: Application) -> None:
        await db.open_pool(pool_size)
        await services.auth_changes.start(db.current_dsn())

    async def close_pool(_: Application) -> None:
        await services.auth_changes.stop()
        await db.close_pool()

    app.on_start += open_pool
    app.on_stop += close_pool


def configure_log_writes(app: Application) -> None:
    """The log's lines written from the event loop while it serves
    (``app.log_format.BatchedStreamHandler``)."""

    async def from_the_loop(_: Application) -> None:
        write_log_from(asyncio.get_running_loop())

    async def from_the_log_thread(_: Application) -> None:
        write_log_from(None)

    app.on_start += from_the_loop
    app.on_stop += from_the_log_thread


def configure_services(app: Application, services: Services) -> None:
    app.services.add_instance(services, Services)

    async def close_services(_: Application) -> None:
        await services.aclose()

    app.on_stop += close_services


def configure_scheduler(app: Application, services: Services) -> None:
    scheduler = None

    async def start(_: Application) -> None:
        nonlocal scheduler
        scheduler = start_scheduler(services.retention.sweep,
                                    services.boot["retention.sweep_schedule"])

    async def stop(_: Application) -> None:
        if scheduler is not None:
            scheduler.shutdown(wait=False)

    app.on_start += start
    app.on_stop += stop


def configure_audio_listener(app: Application, services: Services,
                             bound: BoundListener | None = None, *,
                             collect_on_beat: bool = False) -> None:
    """The pbx AudioSocket listener, bound at start (spec: "Setup: own-telephone-system"),
    or, in a worker, the one its supervisor bound (``bound``); ``collect_on_beat``:
    it runs the process's garbage collections on the calls' beat."""
    listener = AudioListener(services.settings, services.telephony.listener,
                             services.call_voice, bound, collect_on_beat=collect_on_beat)

    async def start(_: Application) -> None:
        await listener.start()

    async def stop(_: Application) -> None:
        await listener.stop()

    app.on_start += start
    app.on_stop += stop


def configure_call_leases(app: Application, services: Services) -> None:
    """This process's lease on its calls, held while it serves; at start it ends the
    calls of processes that died (``app.telephony.leases``). Register it before the
    other stop handlers, so the lease is released while the pool is still open."""
    leases = services.telephony.leases

    async def start(_: Application) -> None:
        await leases.beat()
        leases.start()

    async def stop(_: Application) -> None:
        await leases.stop()

    app.after_start += start
    app.on_stop += stop


class _Background(Protocol):
    def start(self) -> None: ...

    async def stop(self) -> None: ...


def _run_while_serving(app: Application, background: _Background) -> None:
    """``background`` starts once the pool is open and stops on the way down, in the
    order of the stop handlers."""

    async def start(_: Application) -> None:
        background.start()

    async def stop(_: Application) -> None:
        await background.stop()

    app.after_start += start
    app.on_stop += stop


def configure_speech_models(app: Application, services: Services) -> None:
    """Lines' language models are kept up to date while the server runs."""
    _run_while_serving(app, services.speech_models)


def configure_outbox_worker(app: Application, services: Services) -> None:
    """The outbox worker starts once the pool is open and stops before anything closes
    (so register it before the other stop handlers)."""
    _run_while_serving(app, services.outbox_worker)


def create_app(services: Services, *, pool_size: int = 20, own_pool: bool = True,
               scheduled_jobs: bool = True,
               audio_listener: BoundListener | None = None,
               collect_on_beat: bool = False) -> Application:
    """The application. ``own_pool=False`` leaves the pool to the caller (tests that
    share one pool between direct service calls and HTTP); ``scheduled_jobs=False``
    leaves out the daily sweep and the outbox worker (tests run them by hand);
    ``audio_listener`` is the AudioSocket listener a worker's supervisor bound.
    ``collect_on_beat``, for a long-running server only: the garbage collector's pauses
    are kept short and away from calls' audio (``adapters.voice.collection``)."""
    router = Router()
    app = FrontDoorApplication(router=router)
    app.open_front_door(services.boot, COOKIE_NAME)
    configure_call_leases(app, services)  # before the pool's stop: the lease is released
    if scheduled_jobs:
        configure_outbox_worker(app, services)
        configure_speech_models(app, services)
    configure_log_writes(app)
    configure_services(app, services)
    configure_errors(app)
    app.middlewares.append(RequestContext(app))
    app.middlewares.append(UsableQuery())
    app.middlewares.append(SameOriginWrites(services.boot["server.public_url"]))
    app.middlewares.append(PublicApiGate(app, services))
    configure_routes(app, router, services)
    configure_console(app, services)
    configure_docs(app)
    if own_pool:
        configure_database(app, services, pool_size)
    if scheduled_jobs:
        configure_scheduler(app, services)
    configure_audio_listener(app, services, audio_listener, collect_on_beat=collect_on_beat)
    return app
