"""Why a document cannot be taken: the one error family extraction raises.

Each error carries ``reason``, a short stable code the app turns into its error
response; the message is a sentence meant for the person who sent the document.
Extraction raises nothing else, whatever bytes or text it is given.
"""

from __future__ import annotations

__all__ = ["DocumentError", "NotText", "UnsupportedFormat", "EmptyDocument"]


class DocumentError(Exception):
    """A document svc cannot take."""

    reason = "invalid_document"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotText(DocumentError):
    """The content is binary, or not valid text in its character set."""

    reason = "not_text"


class UnsupportedFormat(DocumentError):
    """A media type or character set that extraction does not read."""

    reason = "unsupported_media_type"


class EmptyDocument(DocumentError):
    """Nothing is left once the markup and the whitespace are gone."""

    reason = "empty_document"
