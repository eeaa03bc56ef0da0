"""Libraries and their documents (``/api/libraries``), and searching one Library.

A document arrives either as JSON ``{title, media_type, content}`` or as the raw
upload itself, its ``Content-Type`` one of the document media types (a ``charset``
parameter is honoured) and its title in ``?title=``. Either way the body is capped
(413 past it) before anything is parsed, and the service refuses bad documents
before anything is written.
"""

from __future__ import annotations

from blacksheep import Request, Response, Router
from pydantic import Field

from app.bundle import Services
from app.errors import Unprocessable, UnsupportedMediaType
from app.http.bodies import Body, read_body, read_bytes
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import query_value, signed_in
from app.http.query_values import whole_number
from app.routes.collections import deleting, listing, reading
from app.services.access import reach_of
from app.services.libraries import MAX_DOCUMENT_BYTES, SEARCH_LIMIT_MAX, passage_view
from core.documents import MEDIA_TYPES

# JSON escaping makes text longer than the document it carries (a quote becomes two
# characters, other scripts' letters up to six): the body may be this much larger
# than the document cap, which the service then checks on the content itself.
_JSON_DOCUMENT_BODY_BYTES = 2 * MAX_DOCUMENT_BYTES + 64 * 1024


class LibraryBody(Body):
    name: str
    description: str = ""
    project_id: str | None = None


class LibraryChangeBody(Body):
    name: str | None = None
    description: str | None = None
    project_id: str | None = None


class DocumentBody(Body):
    # A NUL in the content means a binary file: the document reader refuses it (415).
    nul_checked_by_reader = frozenset({"content"})

    title: str
    content: str
    media_type: str = Field(default="text/plain", description=" | ".join(MEDIA_TYPES))


def _media_type(request: Request) -> tuple[str, str | None]:
    """The request's media type (lower case, no parameters) and its charset, if any."""
    header = (request.content_type() or b"").decode("latin-1")
    media_type, _, parameters = header.partition(";")
    charset = None
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    return media_type.strip().lower(), charset


list_libraries = listing("libraries")


@accepts(LibraryBody)
async def create_library(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, LibraryBody, svc.max_body_bytes)
    return json_response(201, await svc.libraries.create(
        identity, name=body.name, description=body.description, project_id=body.project_id))


get_library = reading("libraries", "library_id")


@accepts(LibraryChangeBody)
async def change_library(request: Request, svc: Services, library_id: str) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, LibraryChangeBody, svc.max_body_bytes)
    changes = body.model_dump(include=body.model_fields_set)
    for field in ("name", "description"):
        if field in changes and changes[field] is None:
            raise Unprocessable(f"{field} cannot be null.", field=field)
    return json_response(200, await svc.libraries.update(identity, library_id, changes))


delete_library = deleting("libraries", "library_id")


async def list_documents(request: Request, svc: Services, library_id: str) -> Response:
    identity = await signed_in(request, svc)
    return json_response(200, {"data": await svc.libraries.list_documents(identity, library_id)})


@accepts(DocumentBody)
async def add_document(request: Request, svc: Services, library_id: str) -> Response:
    identity = await signed_in(request, svc)
    media_type, charset = _media_type(request)
    if media_type == "application/json" or media_type.endswith("+json"):
        body = await read_body(request, DocumentBody, _JSON_DOCUMENT_BODY_BYTES)
        row = await svc.libraries.add_document(identity, library_id, title=body.title,
                                               media_type=body.media_type, content=body.content)
    elif media_type in MEDIA_TYPES:
        title = request.query.get("title", [""])[0]
        if not title.strip():
            raise Unprocessable("Give the document a title: ?title=…", code="required",
                                field="title")
        content = await read_bytes(request, MAX_DOCUMENT_BYTES)
        row = await svc.libraries.add_document(identity, library_id, title=title,
                                               media_type=media_type, content=content,
                                               charset=charset)
    else:
        raise UnsupportedMediaType(
            "Send the document as JSON {title, media_type, content}, or as the file itself "
            f"with Content-Type one of {', '.join(MEDIA_TYPES)} and ?title=.",
            code="unsupported_document_type")
    return json_response(201, row)


async def get_document(request: Request, svc: Services, library_id: str,
                       document_id: str) -> Response:
    identity = await signed_in(request, svc)
    return json_response(200, await svc.libraries.get_document(identity, library_id,
                                                               document_id))


async def delete_document(request: Request, svc: Services, library_id: str,
                          document_id: str) -> None:
    identity = await signed_in(request, svc)
    await svc.libraries.delete_document(identity, library_id, document_id)


def _limit(request: Request) -> int:
    return whole_number(query_value(request, "limit"), "limit", default=6,
                        most=SEARCH_LIMIT_MAX)


async def search_library(request: Request, svc: Services, library_id: str) -> Response:
    """``?q=`` over one Library: the passages the agent pipeline would retrieve."""
    identity = await signed_in(request, svc)
    library = await svc.libraries.get(identity, library_id)  # 404 before any search
    query = request.query.get("q", [""])[0]
    limit = _limit(request)
    passages = await svc.libraries.search(await reach_of(identity), [library["id"]], query,
                                          limit=limit)
    return json_response(200, {"query": query,
                               "data": [passage_view(p, query) for p in passages]})


def register(router: Router) -> None:
    router.add_get("/api/libraries", list_libraries)
    router.add_post("/api/libraries", create_library)
    router.add_get("/api/libraries/{library_id}", get_library)
    router.add_patch("/api/libraries/{library_id}", change_library)
    router.add_delete("/api/libraries/{library_id}", delete_library)
    router.add_get("/api/libraries/{library_id}/documents", list_documents)
    router.add_post("/api/libraries/{library_id}/documents", add_document)
    router.add_get("/api/libraries/{library_id}/documents/{document_id}", get_document)
    router.add_delete("/api/libraries/{library_id}/documents/{document_id}", delete_document)
    router.add_get("/api/libraries/{library_id}/search", search_library)
