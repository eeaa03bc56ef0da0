"""Reading request bodies: size cap, JSON, and validation into pydantic models.

Models are strict and forbid unknown fields, so a wrong type or a misspelt field is
refused with 422 naming the field rather than silently coerced or dropped. Nothing is
written before a body has passed here.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, TypeVar

from blacksheep import Request
from pydantic import BaseModel, ConfigDict, ValidationError

from app.http.errors import BadRequest, PayloadTooLarge, Unprocessable, UnsupportedMediaType

Model = TypeVar("Model", bound=BaseModel)


class Body(BaseModel):
    """Base of every request body: strict types, unknown fields refused, no NUL
    character in any string except the fields a model names in ``nul_checked_by_reader``
    (it refuses NUL itself, with its own error)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    nul_checked_by_reader: ClassVar[frozenset[str]] = frozenset()


async def read_bytes(request: Request, max_bytes: int) -> bytes:
    """The raw body, refused with 413 as soon as it passes ``max_bytes``."""
    declared = request.get_first_header(b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise PayloadTooLarge(f"The request body is larger than {max_bytes} bytes.")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        if not chunk:
            continue
        size += len(chunk)
        if size > max_bytes:
            raise PayloadTooLarge(f"The request body is larger than {max_bytes} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)


def _is_json(content_type: bytes | None) -> bool:
    if not content_type:
        return False
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or media.endswith(b"+json")


async def read_json_value(request: Request, max_bytes: int) -> Any:
    if not _is_json(request.content_type()):
        raise UnsupportedMediaType("Send the body as JSON with Content-Type: application/json.")
    raw = await read_bytes(request, max_bytes)
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest(f"The body is not valid JSON: {exc}", code="malformed_json") from None


def validation_problem(error: ValidationError) -> Unprocessable:
    """The first problem pydantic found, as our 422 naming the field."""
    first = error.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    kind = first["type"]
    if kind == "extra_forbidden":
        return Unprocessable(f"Unknown field {field!r}.", code="unknown_field", field=field)
    if kind == "missing":
        return Unprocessable(f"Field {field!r} is required.", code="required", field=field)
    return Unprocessable(f"{field}: {first['msg']}." if field else f"{first['msg']}.",
                         code="invalid_value", field=field)


def _nul_at(value: Any, path: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """Where the first string holding a NUL character sits in a decoded JSON value."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            if "\x00" in key:
                return (*path, key.replace("\x00", "\\0"))
            if (found := _nul_at(item, (*path, key))) is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            if (found := _nul_at(item, (*path, str(index)))) is not None:
                return found
    return None


def validate(model: type[Model], value: Any) -> Model:
    # PostgreSQL text cannot hold NUL ("\u0000" is valid JSON): refuse it here, naming
    # the field, rather than fail when the value reaches the database.
    exempt = getattr(model, "nul_checked_by_reader", frozenset())
    checked = ({key: item for key, item in value.items() if key not in exempt}
               if isinstance(value, dict) and exempt else value)
    if (path := _nul_at(checked)) is not None:
        field = ".".join(path) or None
        raise Unprocessable(f"{field or 'The body'} must not contain the NUL character.",
                            code="invalid_value", field=field)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise validation_problem(exc) from None


async def read_body(request: Request, model: type[Model], max_bytes: int) -> Model:
    """Read, parse and validate a JSON body into ``model``."""
    return validate(model, await read_json_value(request, max_bytes))
