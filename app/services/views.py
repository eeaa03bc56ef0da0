"""How stored values are shown in the API's JSON: ids as text, times in ISO 8601.

A view that shows columns as they are stored names them once (``view_of``) and adds
only what it words or works out itself.
"""

from __future__ import annotations

__all__ = ["json_value", "view_of"]

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any
from uuid import UUID


def json_value(value: Any) -> Any:
    """``value`` as JSON holds it: a UUID as text, a time in ISO 8601; None stays None."""
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value


def view_of(row: Mapping[str, Any], columns: Iterable[str]) -> dict[str, Any]:
    """``columns`` of ``row``, each under its own name, as JSON holds them."""
    return {column: json_value(row[column]) for column in columns}
