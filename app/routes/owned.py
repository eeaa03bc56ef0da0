"""The routes that read and delete what an account keeps (projects, agents, Libraries,
notification targets), made once from the name of the service that keeps it.

Such a service answers ``list(identity)``, ``get(identity, id)`` and ``delete(identity,
id)``, each checking the caller's reach, so their routes differ only in names: list is
200 ``{"data": [...]}``, read is 200 with the item, delete is 204. Creating and changing
read a body of the collection's own, so those handlers stay in the collection's module.

BlackSheep binds a route's values to the handler's parameters by name, passes them in
order, and documents them from the same signature; a handler made here is given the
signature and name its path asks for (``get_project(request, svc, project_id)``), so the
API document reads as if each had been written out, and is registered like any other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from inspect import Signature
from typing import Any

from blacksheep import Request, Response

from app.bundle import Services
from app.http.errors import json_response
from app.http.guards import signed_in

Answer = Callable[..., Awaitable[Response]]


def _handler(name: str, answer: Answer, id_name: str | None = None) -> Answer:
    """``answer`` as a handler called ``name``, its ``item_id`` parameter (if it has one)
    called ``id_name`` as in the route's path."""

    async def handler(*values: Any) -> Response:
        return await answer(*values)

    def renamed(parameter: str) -> str:
        return id_name if parameter == "item_id" and id_name else parameter

    signature = Signature.from_callable(answer)
    handler.__name__ = handler.__qualname__ = name
    handler.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p.replace(name=renamed(p.name)) for p in signature.parameters.values()])
    handler.__annotations__ = {renamed(k): v for k, v in answer.__annotations__.items()}
    return handler


def listing(service: str) -> Answer:
    """``GET <collection>``: what the caller reaches of ``service``'s collection."""

    async def answer(request: Request, svc: Services) -> Response:
        identity = await signed_in(request, svc)
        return json_response(200, {"data": await getattr(svc, service).list(identity)})

    return _handler(f"list_{service}", answer)


def reading(service: str, id_name: str) -> Answer:
    """``GET <collection>/{id_name}``: one item, 404 if the caller cannot reach it."""

    async def answer(request: Request, svc: Services, item_id: str) -> Response:
        identity = await signed_in(request, svc)
        return json_response(200, await getattr(svc, service).get(identity, item_id))

    return _handler(f"get_{id_name.removesuffix('_id')}", answer, id_name)


def deleting(service: str, id_name: str) -> Answer:
    """``DELETE <collection>/{id_name}``: 204 once the item is gone."""

    async def answer(request: Request, svc: Services, item_id: str) -> Response:
        await getattr(svc, service).delete(await signed_in(request, svc), item_id)
        return Response(204)

    return _handler(f"delete_{id_name.removesuffix('_id')}", answer, id_name)
