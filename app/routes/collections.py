"""Routes made once for the collections many modules serve alike.

What an account keeps (projects, agents, Libraries, notification targets): the service
answers ``list(identity)``, ``get(identity, id)`` and ``delete(identity, id)``, each
checking the caller's reach. What administrators manage (providers, HTTP tools,
accounts): the service answers ``list()``, ``find(id)`` and ``delete(id, actor=...)``,
and a view of the module's own shows a row. Either way list is 200 ``{"data": [...]}``,
read is 200 with the item and delete is 204 (a handler that returns nothing is
answered 204 No Content by BlackSheep). An administrator's change is made here too
(the fields sent, on the record); creating, and an account's changes, read and check
a body in ways of the collection's own, so those handlers stay in its module.

BlackSheep binds a route's values to a handler's parameters by name, passes them in
order, documents them from the handler's signature and names the operation after its
``__name__``; it resolves the signature's annotations in the handler's module, which
is this one. A made handler is given the name and signature it would have been written
with (``get_project(request, svc, project_id)``), so the API document reads as if each
had been written out, and it is registered like any other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from inspect import Signature
from typing import Any

from blacksheep import Request, Response

from app.bundle import Services
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import administrator, signed_in

Answer = Callable[..., Awaitable[Response | None]]
View = Callable[[dict[str, Any]], dict[str, Any]]


def _handler(name: str, answer: Answer, id_name: str | None = None) -> Answer:
    """``answer`` as a handler called ``name``, its ``item_id`` parameter (if it has one)
    called ``id_name`` as in the route's path."""

    async def handler(*values: Any) -> Response | None:
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

    async def answer(request: Request, svc: Services, item_id: str) -> None:
        await getattr(svc, service).delete(await signed_in(request, svc), item_id)

    return _handler(f"delete_{id_name.removesuffix('_id')}", answer, id_name)


def admin_listing(service: str, view: View) -> Answer:
    """``GET <collection>`` for administrators: every row, each as ``view`` shows it."""

    async def answer(request: Request, svc: Services) -> Response:
        await administrator(request, svc)
        return json_response(200, {"data": [view(r) for r in await getattr(svc, service).list()]})

    return _handler(f"list_{service}", answer)


def admin_reading(service: str, id_name: str, view: View) -> Answer:
    """``GET <collection>/{id_name}`` for administrators: one row as ``view`` shows it."""

    async def answer(request: Request, svc: Services, item_id: str) -> Response:
        await administrator(request, svc)
        return json_response(200, view(await getattr(svc, service).find(item_id)))

    return _handler(f"get_{id_name.removesuffix('_id')}", answer, id_name)


def admin_changing(service: str, id_name: str, model: type[Body], view: View, *,
                   nullable: tuple[str, ...] = ()) -> Answer:
    """``PATCH <collection>/{id_name}`` for administrators: the fields sent in ``model``
    change, on the record; a null is "no change" except for the ``nullable`` fields,
    where it removes the value. 200 with the row as ``view`` shows it."""

    async def answer(request: Request, svc: Services, item_id: str) -> Response:
        identity = await administrator(request, svc)
        body = await read_body(request, model, svc.max_body_bytes)
        changes = {name: value for name, value in body.model_dump(exclude_unset=True).items()
                   if value is not None or name in nullable}
        row = await getattr(svc, service).update(item_id, actor=identity.account_id,
                                                 changes=changes)
        return json_response(200, view(row))

    return accepts(model)(_handler(f"change_{id_name.removesuffix('_id')}", answer, id_name))


def admin_deleting(service: str, id_name: str) -> Answer:
    """``DELETE <collection>/{id_name}`` for administrators: 204 once the row is gone, the
    deletion recorded as theirs."""

    async def answer(request: Request, svc: Services, item_id: str) -> None:
        identity = await administrator(request, svc)
        await getattr(svc, service).delete(item_id, actor=identity.account_id)

    return _handler(f"delete_{id_name.removesuffix('_id')}", answer, id_name)
