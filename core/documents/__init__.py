"""Documents for Libraries: text extraction, chunking, query terms and snippets.

Sans-IO and deterministic. The app stores what :func:`extract` returns, cuts it with
:func:`chunk_text` (offsets index the stored text), searches with the terms of
:func:`query_terms`, and cites passages with :func:`snippet`. Extraction raises only
:class:`DocumentError` subclasses, whatever it is fed.
"""

__all__ = [
    "DocumentError", "EmptyDocument", "NotText", "UnsupportedFormat",
    "MEDIA_TYPES", "extract", "decode", "normalise",
    "TextChunk", "chunk_text", "TARGET_CHARS", "OVERLAP_CHARS", "read_document",
    "STOP_WORDS", "MAX_TERMS", "SNIPPET_CHARS", "query_terms", "search_expression", "snippet",
]

from core.documents._chunks import OVERLAP_CHARS, TARGET_CHARS, TextChunk, chunk_text
from core.documents._errors import DocumentError, EmptyDocument, NotText, UnsupportedFormat
from core.documents._extract import MEDIA_TYPES, decode, extract, normalise
from core.documents._query import (
    MAX_TERMS,
    SNIPPET_CHARS,
    STOP_WORDS,
    query_terms,
    search_expression,
    snippet,
)
from core.documents._read import read_document
