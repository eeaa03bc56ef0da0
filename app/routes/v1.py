"""``/v1``: the chat-completions protocol (spec: public-api.md "Endpoints").

``GET /v1/models`` and ``GET /v1/models/{id}`` list what the key's user may address:
provider model names and ``agent/<id>``. ``POST /v1/chat/completions`` runs a
passthrough call or an agent. Order of checks: the key, then the body, then the model,
then the rate limit, so refused requests never use up the quota.
"""

from __future__ import annotations

import functools
from typing import Any

from blacksheep import Request, Response, Router

from app.bundle import Services
from app.errors import BadRequest
from app.http.bodies import (
    JsonProblem,
    may_hold_unstorable,
    parse_json,
    read_bytes,
    unstorable_at,
)
from app.http.direct_routes import DirectRoutes
from app.http.errors import json_response
from app.public_api import agent_calls, passthrough
from app.public_api.agent_calls import AGENT_PREFIX
from app.public_api.auth import admit, api_caller
from app.services.access import reach_of
from app.services.providers import LOCAL, ModelNotFound
from app.tables import Provider
from core.chat_request import ChatRequestError, read_chat_request

API_MAX_BODY_BYTES = 8 * 1024 * 1024


def _model_entry(model_id: str, created: int, owned_by: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": created, "owned_by": owned_by}


async def _models_for(svc: Services, request: Request) -> list[dict[str, Any]]:
    identity = await api_caller(request, svc)
    request.rate_headers = await admit(svc, identity)  # type: ignore[attr-defined]
    entries = [_model_entry(LOCAL, 0, "svc")]
    rows = await Provider.select(Provider.name, Provider.models, Provider.created_at).where(
        Provider.enabled == True).order_by(Provider.created_at)  # noqa: E712
    listed = {LOCAL}
    for row in rows:
        created = int(row["created_at"].timestamp())
        for name in row["models"]:
            if name not in listed:  # two providers offering one name: the first answers it
                listed.add(name)
                entries.append(_model_entry(name, created, row["name"]))
    for agent in await svc.agents.listed_for(await reach_of(identity)):
        entries.append(_model_entry(f"{AGENT_PREFIX}{agent['id']}",
                                    int(agent["created_at"].timestamp()), "agent"))
    return entries


async def list_models(request: Request, svc: Services) -> Response:
    entries = await _models_for(svc, request)
    return json_response(200, {"object": "list", "data": entries}, request.rate_headers)


async def get_model(request: Request, svc: Services) -> Response:
    wanted = request.route_values.get("tail", "")
    for entry in await _models_for(svc, request):
        if entry["id"] == wanted:
            return json_response(200, entry, request.rate_headers)
    raise ModelNotFound(f"The model {wanted!r} does not exist or you do not have access to it.",
                        field="model")


async def _json_body(request: Request) -> Any:
    """The body as JSON whatever its Content-Type says: ``curl -d`` sends form encoding
    by default, and a key is needed anyway, so leniency opens nothing to browsers.
    Text PostgreSQL cannot store (NUL, a lone surrogate) is refused here, naming the
    field, for every model alike: an agent's conversation is stored."""
    raw = await read_bytes(request, API_MAX_BODY_BYTES)
    try:
        value = parse_json(raw)
    except JsonProblem as exc:
        raise BadRequest(f"We could not parse the JSON body of your request: {exc}. Send a "
                         "JSON object.", code="malformed_json") from None
    if may_hold_unstorable(raw) and (found := unstorable_at(value)) is not None:
        path, reason = found
        param = ".".join(path) or None
        raise BadRequest(f"{param or 'The body'} must not contain {reason}.",
                         code="invalid_value", field=param)
    return value


async def chat_completions(request: Request, svc: Services) -> Response:
    identity = await api_caller(request, svc)
    try:
        chat = read_chat_request(await _json_body(request))
    except ChatRequestError as exc:
        raise BadRequest(exc.message, code=exc.code, field=exc.param) from None
    if chat.model.startswith(AGENT_PREFIX):
        return await agent_calls.answer(request, svc, identity, chat)
    resolved = await svc.providers.resolve(chat.model, identity.account_id)
    if resolved.is_local:
        return await agent_calls.answer_local(request, svc, identity, chat)
    headers = await admit(svc, identity)
    run = passthrough.stream if chat.stream else passthrough.complete
    return await run(request, svc, identity, chat, resolved, headers)


def register(router: Router) -> None:
    router.add_get("/v1/models", list_models)
    router.add_get("/v1/models/*", get_model)
    router.add_post("/v1/chat/completions", chat_completions)


def register_direct(routes: DirectRoutes, svc: Services) -> None:
    """Chat completions, most of a busy server's requests, answered before the router
    with the services bound once (``app.http.direct_routes``); the router's route stays
    for what the direct one does not take, and for the API's description."""
    routes.add("POST", "/v1/chat/completions", functools.partial(chat_completions, svc=svc))
