"""JSON on the ``/v1`` hot path: orjson, with the standard library for what it refuses.

orjson decodes and encodes several times faster than ``json``, but it refuses a few
things ``json`` takes: a lone surrogate escape (``"\\ud800"``, which models and clients
do send) and numbers beyond a double. Those rare inputs go through ``json`` instead, so
what is accepted stays exactly what it was. Errors are ``ValueError`` (bad JSON, bad
UTF-8), ``RecursionError`` (nesting too deep) or ``TypeError`` (not encodable).
"""

from __future__ import annotations

__all__ = ["dumps", "loads"]

import json
from typing import Any

import orjson

_compact_ascii = json.JSONEncoder(separators=(",", ":"))


def loads(data: bytes | str) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)  # the same verdict as before, or its error


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON; a lone surrogate (no UTF-8 form) is written as an escape."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return _compact_ascii.encode(value).encode()
