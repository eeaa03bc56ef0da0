"""An upload read whole: what a Library stores for it, in one call.

One function a worker process can run by name: the text ``extract`` returns and the
passages ``chunk_text`` cuts from it, so the parent receives both in one answer and
never parses the upload itself.
"""

from __future__ import annotations

__all__ = ["read_document"]

from core.documents._chunks import TextChunk, chunk_text
from core.documents._extract import extract


def read_document(content: bytes | str, media_type: str,
                  charset: str | None = None) -> tuple[str, list[TextChunk]]:
    """The text of an upload and its passages; ``DocumentError`` when there is none."""
    text = extract(content, media_type, charset=charset)
    return text, chunk_text(text)
