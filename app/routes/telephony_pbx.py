"""The telephone system's questions: ``GET /api/telephony/pbx/answer`` and ``/continue``.

Absent (404) until the feature is on and a provider is named, decided per request.
Then both the private source address and the shared secret are required
(``svc.telephony.pbx.authenticate``). Answers are plain text; an empty body means hang
up, and every refusal — 403 included — has an empty body, so a dialplan that reads
the answer as an identifier hangs up (spec: telephony.md "Setup: own-telephone-system
transport").
"""

from __future__ import annotations

from blacksheep import Content, Request, Response, Router

from app.bundle import Services
from app.errors import Forbidden, NotFound
from app.http.guards import query_value
from app.telephony.signalling import KEY_HEADER

ANSWER_PATH = "/api/telephony/pbx/answer"
CONTINUE_PATH = "/api/telephony/pbx/continue"


def _text(status: int, text: str) -> Response:
    return Response(status, None, Content(b"text/plain; charset=utf-8", text.encode()))


async def _admitted(request: Request, svc: Services, path: str) -> bool:
    if not await svc.telephony.surface_open():
        raise NotFound(f"No resource at {path}.")
    try:
        await svc.telephony.pbx.authenticate(request.client_ip, request.get_first_header(
            KEY_HEADER), path)
    except Forbidden:
        return False
    return True


async def answer(request: Request, svc: Services) -> Response:
    if not await _admitted(request, svc, ANSWER_PATH):
        return _text(403, "")
    identifier = await svc.telephony.pbx.answer(query_value(request, "from"),
                                                query_value(request, "to"))
    return _text(200, identifier)


async def proceed(request: Request, svc: Services) -> Response:
    if not await _admitted(request, svc, CONTINUE_PATH):
        return _text(403, "")
    return _text(200, await svc.telephony.pbx.proceed(query_value(request, "call")))


def register(router: Router) -> None:
    router.add_get(ANSWER_PATH, answer)
    router.add_get(CONTINUE_PATH, proceed)
