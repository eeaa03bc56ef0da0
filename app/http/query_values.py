"""Query strings every handler can read, and whole numbers read from them.

A query value is compared with stored text or sent to PostgreSQL as it is (an audit
kind, a document's title), and PostgreSQL text cannot hold NUL; a query that is not
UTF-8 cannot even be decoded. Both are refused here, before any handler of the API
reads the query, with 422 naming the parameter — one rule for every route rather than
one per reader. The console's pages read only ``next`` on the server, which is judged
on its own (a browser sent elsewhere lands on ``/``, not on a JSON error); what their
scripts read from the address goes to the API, and meets this rule there.

``whole_number`` reads a bounded count (``?limit=``): only ASCII digits, and few enough
of them that no integer conversion limit or database column is ever reached.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from blacksheep import Request, Response

from app.errors import Unprocessable

# As many digits as a PostgreSQL bigint holds: enough for any count or cursor of ours,
# few enough to convert at once.
_WHOLE_NUMBER = re.compile(r"[0-9]{1,19}")
#: The largest bigint, the bound of a cursor that is a row's number.
BIGINT_MAX = 2**63 - 1


def _escaped(text: str) -> str:
    return text.encode("unicode_escape").decode("ascii")


def unusable_query(raw: bytes) -> Unprocessable | None:
    """Why the raw query string cannot be used as it stands, or None."""
    try:
        pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        return Unprocessable("The query string is not UTF-8.", field=None)
    for name, value in pairs:
        if "\x00" in name or "\x00" in value:
            return Unprocessable(f"The query parameter {_escaped(name)!r} must not contain "
                                 "the NUL character.", field=_escaped(name))
    return None


_API_PATHS = (b"/api/", b"/v1/")
# Telephone systems' requests keep their own rules: a carrier's webhook is judged by
# its signature over the whole address before anything else (unsigned: 403), and the
# dialplan's questions are answered in plain text, where a refusal is an empty answer
# and a value their handlers cannot use names nothing.
_TELEPHONE_SYSTEM_PATHS = (b"/api/telephony/carrier/", b"/api/telephony/pbx/")


class UsableQuery:
    """Middleware: 422 for a query to the API holding NUL or bytes that are not UTF-8."""

    async def __call__(self, request: Request, handler) -> Response:
        raw = request.url.query
        path = request.url.path
        if (raw and path.startswith(_API_PATHS) and not path.startswith(_TELEPHONE_SYSTEM_PATHS)
                and (refusal := unusable_query(raw)) is not None):
            raise refusal
        return await handler(request)


def whole_number(text: str | None, field: str, *, default: int, least: int = 1,
                 most: int) -> int:
    """``text`` as a whole number from ``least`` to ``most``; ``default`` when absent;
    422 naming ``field`` otherwise (a sign, a space, superscript or too many digits).
    An empty value (``?limit=``) is taken as absent."""
    if not text:
        return default
    if not _WHOLE_NUMBER.fullmatch(text) or not least <= int(text) <= most:
        raise Unprocessable(f"{field} must be a whole number from {least} to {most}.",
                            field=field)
    return int(text)
