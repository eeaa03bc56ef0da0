"""The OpenAPI document, including the JSON bodies our handlers read themselves.

Handlers parse bodies with ``app.http.bodies.read_body`` (so size caps and the error
shape are ours), which BlackSheep's generator cannot see. ``@accepts(Model)`` records
the model on the handler, and :class:`Docs` documents it as the request body.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from blacksheep import Application
from blacksheep.server.openapi.v3 import OpenAPIHandler
from blacksheep.server.openapi.common import EndpointDocs
from openapidocs.v3 import Info, MediaType, RequestBody

Handler = TypeVar("Handler", bound=Callable[..., Any])


def accepts(model: type) -> Callable[[Handler], Handler]:
    """Mark a handler as reading a JSON body of ``model``."""

    def mark(handler: Handler) -> Handler:
        handler.__svc_body__ = model  # type: ignore[attr-defined]
        return handler

    return mark


def page(handler: Handler) -> Handler:
    """Mark a handler as an HTML page of the console: left out of the API document."""
    handler.__svc_page__ = True  # type: ignore[attr-defined]
    return handler


class Docs(OpenAPIHandler):
    def get_handler_docs(self, obj: Any) -> EndpointDocs | None:
        if getattr(getattr(obj, "root_fn", obj), "__svc_page__", False):
            return EndpointDocs(ignored=True)
        return super().get_handler_docs(obj)

    def get_request_body(self, handler: Any) -> RequestBody | None:
        model = getattr(getattr(handler, "root_fn", handler), "__svc_body__", None)
        if model is None:
            return super().get_request_body(handler)
        return RequestBody(content={"application/json": MediaType(
            schema=self.get_schema_by_type(model))}, required=True)


def configure_docs(app: Application) -> None:
    docs = Docs(info=Info(title="svc", version="1"), ui_path="/docs",
                json_spec_path="/openapi.json", yaml_spec_path="/openapi.yaml")
    docs.bind_app(app)
