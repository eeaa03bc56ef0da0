"""A retrieved passage: what retrieval returns and what citations point back to."""

from __future__ import annotations

__all__ = ["Passage"]

from uuid import UUID

from .records import frozen


@frozen
class Passage:
    library_id: UUID
    document_id: UUID
    document_title: str
    chunk_id: int
    #: character offsets of the passage in the document's extracted text
    start: int
    end: int
    text: str
    #: retrieval rank score, higher is better; comparable within one search only
    score: float
