"""The OpenAPI document, including the JSON bodies our handlers read themselves.

Handlers parse bodies with ``app.http.bodies.read_body`` (so size caps and the error
shape are ours), which BlackSheep's generator cannot see. ``@accepts(Model)`` records
the model on the handler, and :class:`Docs` documents it as the request body.

The page at ``/docs`` is Swagger UI (5.x: our document is OpenAPI 3.1) from the
``swagger-ui-py`` package, its version pinned in pyproject.toml, served by this server
under ``/docs/assets/``: nothing is loaded from elsewhere, and the page carries the
console's security headers.

The document is written the first time it is asked for, not when the server starts:
writing it and its YAML twin costs about a second of CPU, which every server process
would otherwise spend before it answers anything.
"""

from __future__ import annotations

import functools
from html import escape
from importlib.resources import files
from typing import Any, Callable, TypeVar

from blacksheep import Application, Content, Request, Response
from blacksheep.server.openapi.common import DefaultSerializer, EndpointDocs
from blacksheep.server.openapi.ui import SwaggerUIProvider, UIOptions
from blacksheep.server.openapi.v3 import OpenAPIHandler
from openapidocs.v3 import Info, MediaType, RequestBody

from app.errors import NotFound
from app.http.security_headers import secured

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


class _Written:
    """One format of the API document: written when first read, or as set."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __get__(self, docs: "Docs", owner: type | None = None) -> bytes:
        return docs._written_as(self.kind)

    def __set__(self, docs: "Docs", value: bytes) -> None:
        docs._written[self.kind] = value


class Docs(OpenAPIHandler):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._app: Application | None = None
        self._written: dict[str, bytes] = {}  # "json" / "yaml": the document as served
        self._document: Any = None
        super().__init__(*args, **kwargs)

    async def build_docs(self, app: Application) -> None:
        """At start, only the page: the document waits for its first reader."""
        self._app = app
        options = UIOptions(spec_url=self.get_spec_path(), page_title=self.get_ui_page_title())
        for ui_provider in self.ui_providers:
            ui_provider.build_ui(options)

    def _written_as(self, kind: str) -> bytes:
        if not self._written.get(kind) and self._app is not None:
            if self._document is None:
                self._document = self.generate_documentation(self._app)
                self.on_docs_generated(self._document)
            serializer = self._serializer or DefaultSerializer()
            write = serializer.to_json if kind == "json" else serializer.to_yaml
            self._written[kind] = write(self._document).encode("utf8")
        return self._written.get(kind, b"")

    # BlackSheep's handlers for /openapi.json and /openapi.yaml read these attributes.
    _json_docs = _Written("json")
    _yaml_docs = _Written("yaml")

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


ASSETS_PATH = "/docs/assets"
# Only the package's static files are used, not its framework handlers.
_BUNDLE = files("swagger_ui") / "static"
# The files of the bundle the page uses, and their media types; nothing else is served.
_ASSETS = {
    "swagger-ui-bundle.js": b"text/javascript; charset=utf-8",
    "swagger-ui.css": b"text/css; charset=utf-8",
    "favicon-32x32.png": b"image/png",
}
_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" href="{assets}/favicon-32x32.png">
<link rel="stylesheet" href="{assets}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui" data-spec-url="{spec_url}"></div>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script src="/static/api_docs.js"></script>
</body>
</html>
"""


class LocalSwaggerUI(SwaggerUIProvider):
    """Swagger UI whose page, scripts and styles all come from this server."""

    def get_openapi_ui_html(self, options: UIOptions) -> str:
        return _PAGE.format(title=escape(options.page_title), assets=ASSETS_PATH,
                            spec_url=escape(options.spec_url))

    def get_ui_handler(self) -> Callable[[Request], Response]:
        def ui_page(request: Request) -> Response:
            return secured(Response(200, None, Content(b"text/html; charset=utf-8",
                                                       self._ui_html)))

        return ui_page


@functools.cache
def _asset_bytes(name: str) -> bytes:
    return (_BUNDLE / name).read_bytes()


async def docs_asset(name: str) -> Response:
    media_type = _ASSETS.get(name)
    if media_type is None:
        raise NotFound()
    response = Response(200, None, Content(media_type, _asset_bytes(name)))
    response.headers[b"Cache-Control"] = b"public, max-age=86400"
    response.headers[b"X-Content-Type-Options"] = b"nosniff"
    return response


def configure_docs(app: Application) -> None:
    docs = Docs(info=Info(title="svc", version="1"), ui_path="/docs",
                json_spec_path="/openapi.json", yaml_spec_path="/openapi.yaml")
    docs.ui_providers = [LocalSwaggerUI("/docs")]
    app.router.add_get(ASSETS_PATH + "/{name}", page(docs_asset))
    docs.bind_app(app)
