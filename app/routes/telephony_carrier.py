"""The carrier's webhooks: ``POST /api/telephony/carrier/voice``, ``/status``, ``/continue``.

Absent (404) until the feature is on and a provider is named, decided per request
(spec: telephony.md "Endpoints"). An address over its failure limit (429) or a request
without a signature (403) is refused before its body is read
(``svc.telephony.carrier.before_body``); then the body is read up to 16 KiB (413
beyond), the signature checked (``authenticate``: 403), and only then is the request
acted on. Answers are TwiML.
"""

from __future__ import annotations

from typing import Awaitable, Callable

from blacksheep import Content, Request, Response, Router

from app.bundle import Services
from app.errors import NotFound
from app.http.bodies import read_bytes
from app.telephony.signalling import (
    CONTINUE_PATH,
    MAX_WEBHOOK_BODY,
    SIGNATURE_HEADERS,
    STATUS_PATH,
    VOICE_PATH,
    CarrierRequest,
    CarrierSignalling,
    Params,
)
from core import twiml

Step = Callable[[CarrierSignalling, Params], Awaitable[bytes]]


def _signature(request: Request) -> str | None:
    for name in SIGNATURE_HEADERS:
        value = request.get_first_header(name)
        if value is not None:
            return value.decode("latin-1")
    return None


async def _webhook(request: Request, svc: Services, path: str, step: Step) -> Response:
    if not await svc.telephony.surface_open():
        raise NotFound(f"No resource at {path}.")
    signature, address = _signature(request), request.client_ip or ""
    await svc.telephony.carrier.before_body(path, address, signature)
    body = await read_bytes(request, MAX_WEBHOOK_BODY)
    params = await svc.telephony.carrier.authenticate(CarrierRequest(
        path=path, query=(request.url.query or b"").decode("latin-1"), body=body,
        signature=signature, address=address))
    document = await step(svc.telephony.carrier, params)
    return Response(200, None, Content(twiml.CONTENT_TYPE.encode(), document))


async def voice(request: Request, svc: Services) -> Response:
    return await _webhook(request, svc, VOICE_PATH, CarrierSignalling.voice)


async def status(request: Request, svc: Services) -> Response:
    return await _webhook(request, svc, STATUS_PATH, CarrierSignalling.status)


async def proceed(request: Request, svc: Services) -> Response:
    return await _webhook(request, svc, CONTINUE_PATH, CarrierSignalling.proceed)


def register(router: Router) -> None:
    router.add_post(VOICE_PATH, voice)
    router.add_post(STATUS_PATH, status)
    router.add_post(CONTINUE_PATH, proceed)
