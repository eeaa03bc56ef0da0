"""Talking to a line in text (``POST /api/lines/{line_id}/conversation``): the line's
account or an administrator; anyone else gets 404 (``app.telephony.conversation``)."""

from __future__ import annotations

from blacksheep import Request, Response, Router

from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.errors import Unprocessable
from app.http.errors import json_response
from app.http.guards import signed_in
from app.bundle import Services
from app.telephony.conversation import MAX_TURN_CHARS


class TurnBody(Body):
    #: what the caller says
    text: str
    #: the conversation to continue; absent starts a new one
    conversation_id: str | None = None


@accepts(TurnBody)
async def talk(request: Request, svc: Services, line_id: str) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, TurnBody, svc.max_body_bytes)
    text = " ".join(body.text.split())
    if not text or len(text) > MAX_TURN_CHARS:
        raise Unprocessable(f"text: 1 to {MAX_TURN_CHARS} characters.", field="text")
    return json_response(200, await svc.line_conversations.turn(
        identity, line_id, text, body.conversation_id))


def register(router: Router) -> None:
    router.add_post("/api/lines/{line_id}/conversation", talk)
