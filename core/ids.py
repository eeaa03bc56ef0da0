"""How an id is written: canonical UUID text (``str(uuid)``, either case).

Python's ``UUID()`` also reads braces, a ``urn:uuid:`` prefix or bare hex; an address
or a field that names one of our rows takes only the one spelling, so an id can never
carry anything else (a ``/``, a ``?``) into the addresses built from it.
"""

from __future__ import annotations

import re
from uuid import UUID

_ID_TEXT = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def is_id(text: object) -> bool:
    """Whether ``text`` is an id as we write them."""
    return isinstance(text, str) and _ID_TEXT.fullmatch(text) is not None


def id_or_none(value: object) -> UUID | None:
    """The id ``value`` is (a UUID, or its canonical text), else None."""
    if isinstance(value, UUID):
        return value
    return UUID(value) if is_id(value) else None  # type: ignore[arg-type]
