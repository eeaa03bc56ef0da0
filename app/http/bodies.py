"""Reading request bodies: size cap, JSON, and validation into pydantic models.

Models are strict and forbid unknown fields, so a wrong type or a misspelt field is
refused with 422 naming the field rather than silently coerced or dropped. Nothing is
written before a body has passed here.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, TypeVar

from blacksheep import Request
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from app.errors import BadRequest, PayloadTooLarge, Unprocessable, UnsupportedMediaType
from core import jsonfast

Model = TypeVar("Model", bound=BaseModel)
# Deeper than any body of ours; a deeper one would overflow the recursion of whatever
# walks it next (validation, encoding for the database).
MAX_JSON_DEPTH = 64
# A UTF-16 surrogate on its own is valid in JSON ("\ud800") but not Unicode: it cannot
# be encoded for PostgreSQL.
_SURROGATE = re.compile("[\ud800-\udfff]")


class Body(BaseModel):
    """Base of every request body: strict types, unknown fields refused, no NUL
    character in any string except the fields a model names in ``nul_checked_by_reader``
    (it refuses NUL itself, with its own error)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    nul_checked_by_reader: ClassVar[frozenset[str]] = frozenset()


def change_body(model: type[Body], name: str) -> type[Body]:
    """The body of a change to what ``model`` creates: the same fields, each optional
    and None when not sent (``model_fields_set`` tells a null sent from a field left
    out), so the two cannot drift apart."""
    fields: dict[str, Any] = {field: (info.annotation | None, None)
                              for field, info in model.model_fields.items()}
    return create_model(name, __base__=Body, __module__=model.__module__, **fields)


def _too_large(max_bytes: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"The request body is larger than {max_bytes} bytes.")


async def read_bytes(request: Request, max_bytes: int) -> bytes:
    """The raw body, refused with 413 as soon as it passes ``max_bytes``."""
    declared = request.get_first_header(b"content-length")
    if declared is not None and declared.isdigit():
        if int(declared) > max_bytes:
            raise _too_large(max_bytes)
        if request.get_first_header(b"transfer-encoding") is None:
            # The server reads no more than the declared length, under the cap: read it
            # whole at once (half the cost of the chunk loop below for a usual body).
            raw = await request.read() or b""
            if len(raw) > max_bytes:  # a server that does not hold to the length
                raise _too_large(max_bytes)
            return raw
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        if not chunk:
            continue
        size += len(chunk)
        if size > max_bytes:
            raise _too_large(max_bytes)
        chunks.append(chunk)
    return b"".join(chunks)


class JsonProblem(ValueError):
    """A body that is not usable JSON; the message says why."""


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (without recursion)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level + 1)
            if deepest > MAX_JSON_DEPTH:
                break
            stack.extend((child, level + 1) for child in item)
    return deepest


def parse_json(raw: bytes) -> Any:
    """The decoded body, or :class:`JsonProblem`: malformed, not UTF-8, a number too
    long to convert (over 4,300 digits), or nested too deeply."""
    try:
        value = jsonfast.loads(raw)
    except RecursionError:
        raise JsonProblem("it nests too deeply") from None
    except ValueError as exc:  # malformed, not UTF-8, or an integer past the digit limit
        raise JsonProblem(str(exc)) from None
    # Nesting needs an opening bracket per level: a body with few of them (every usual
    # one) cannot nest too deeply, and is not walked.
    if (raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH
            and _depth(value) > MAX_JSON_DEPTH):
        raise JsonProblem(f"it nests deeper than {MAX_JSON_DEPTH} levels")
    return value


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
        return parse_json(raw)
    except JsonProblem as exc:
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


def _unstorable(text: str) -> str | None:
    """What in ``text`` PostgreSQL cannot store, or None."""
    if "\x00" in text:
        return "the NUL character"
    if _SURROGATE.search(text):
        return "a lone surrogate (\\ud800-\\udfff), which is not Unicode"
    return None


def may_hold_unstorable(raw: bytes) -> bool:
    """Whether JSON text ``raw`` can decode to a string PostgreSQL cannot store. NUL
    and lone surrogates are control characters or escapes in valid JSON (``\\u0000``,
    ``\\ud800``), or, decoded leniently, a raw NUL (UTF-16 and UTF-32 text) or a
    surrogate's UTF-8 form (which starts with 0xED): bytes without any of them hold
    none, and their decoded value need not be walked."""
    return b"\\u" in raw or b"\x00" in raw or b"\xed" in raw


def unstorable_at(value: Any, path: tuple[str, ...] = ()) -> tuple[tuple[str, ...], str] | None:
    """Where the first string PostgreSQL cannot store sits in a decoded JSON value, and
    what it holds. A key is named with its offending characters escaped."""
    if isinstance(value, str):
        reason = _unstorable(value)
        return (path, reason) if reason else None
    if isinstance(value, dict):
        for key, item in value.items():
            if reason := _unstorable(key):
                return (*path, key.encode("unicode_escape").decode("ascii")), reason
            if (found := unstorable_at(item, (*path, key))) is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            if (found := unstorable_at(item, (*path, str(index)))) is not None:
                return found
    return None


def validate(model: type[Model], value: Any) -> Model:
    # PostgreSQL text cannot hold NUL or a lone surrogate (both valid JSON): refuse them
    # here, naming the field, rather than fail when the value reaches the database.
    exempt = getattr(model, "nul_checked_by_reader", frozenset())
    checked = ({key: item for key, item in value.items() if key not in exempt}
               if isinstance(value, dict) and exempt else value)
    if (found := unstorable_at(checked)) is not None:
        path, reason = found
        field = ".".join(path) or None
        raise Unprocessable(f"{field or 'The body'} must not contain {reason}.",
                            code="invalid_value", field=field)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise validation_problem(exc) from None


async def read_body(request: Request, model: type[Model], max_bytes: int) -> Model:
    """Read, parse and validate a JSON body into ``model``."""
    return validate(model, await read_json_value(request, max_bytes))
