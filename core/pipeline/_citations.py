"""Citation markers: finding ``[n]`` in an answer and mapping them to passages.

The prompt numbers the retrieved passages ``[1]``..``[n]`` and asks the model to cite
them that way (``_prompt.py``). Models write markers in several shapes — ``[2]``,
``[1][3]``, ``[1, 3]``, ``[2-4]`` — so all of them are read; a number outside the
passages (a model inventing ``[9]`` of six) cites nothing.

``url_annotations`` renders the citations the way OpenAI-style clients read them: one
``url_citation`` per marker, spanning the marker's characters in the answer.
"""

from __future__ import annotations

__all__ = ["SNIPPET_CHARS", "cited_numbers", "consulted_citations", "map_citations", "snippet",
           "url_annotations", "whole_answer_annotations"]

import re
from collections.abc import Callable, Sequence
from typing import Any

from core.passages import Passage
from core.pipeline._events import Citation

SNIPPET_CHARS = 300
_MARKER = re.compile(r"\[(\d{1,3}(?:\s*[-,–]\s*\d{1,3})*)\]")
_RANGE = re.compile(r"(\d{1,3})\s*[-–]\s*(\d{1,3})")
_MAX_RANGE = 20  # "[1-999]" is not a citation worth expanding


def _numbers_of(group: str) -> list[int]:
    numbers: list[int] = []
    for part in group.split(","):
        span = _RANGE.fullmatch(part.strip())
        if span is None:
            numbers.append(int(part))
            continue
        low, high = int(span.group(1)), int(span.group(2))
        if low <= high and high - low < _MAX_RANGE:
            numbers.extend(range(low, high + 1))
    return numbers


def cited_numbers(text: str) -> list[int]:
    """The marker numbers in ``text``, each once, in order of first appearance."""
    seen: dict[int, None] = {}
    for match in _MARKER.finditer(text):
        for number in _numbers_of(match.group(1)):
            seen.setdefault(number, None)
    return list(seen)


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """The passage shortened at a word boundary, whitespace made single."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] or flat[:limit]
    return cut + "…"


def _citation(number: int, passage: Passage) -> Citation:
    return Citation(number, passage.library_id, passage.document_id, passage.document_title,
                    snippet(passage.text))


def map_citations(text: str, passages: Sequence[Passage]) -> tuple[Citation, ...]:
    """The passages ``text`` cites; ``passages[0]`` is ``[1]``."""
    return tuple(_citation(number, passages[number - 1]) for number in cited_numbers(text)
                 if 1 <= number <= len(passages))


def consulted_citations(passages: Sequence[Passage]) -> tuple[Citation, ...]:
    """Every passage the model was given, for an answer that cannot carry markers (a
    JSON answer): what it was grounded on, since which sentence used what is unknown."""
    return tuple(_citation(number, passage) for number, passage in enumerate(passages, start=1))


def url_annotations(text: str, citations: Sequence[Citation],
                    url_of: Callable[[Citation], str]) -> list[dict[str, Any]]:
    """``annotations`` of type ``url_citation`` for the markers of ``text``.

    spec: DESIGN.md "/v1 protocol" — citations also as OpenAI-style annotations. Each
    marker that cites a passage gives one annotation per passage it names, with the
    marker's ``start_index``/``end_index`` (character offsets, end exclusive) and the
    document's title and address (``url_of``). Markers citing nothing are left out.
    """
    by_number = {citation.number: citation for citation in citations}
    annotations = []
    for match in _MARKER.finditer(text):
        for number in dict.fromkeys(_numbers_of(match.group(1))):
            citation = by_number.get(number)
            if citation is not None:
                annotations.append({"type": "url_citation", "url_citation": {
                    "start_index": match.start(), "end_index": match.end(),
                    "title": citation.title, "url": url_of(citation)}})
    return annotations


def whole_answer_annotations(text: str, citations: Sequence[Citation],
                             url_of: Callable[[Citation], str]) -> list[dict[str, Any]]:
    """``url_citation`` annotations for an answer without markers: one per document,
    each spanning the whole answer."""
    by_document = {citation.document_id: citation for citation in reversed(citations)}
    return [{"type": "url_citation", "url_citation": {
        "start_index": 0, "end_index": len(text), "title": citation.title,
        "url": url_of(citation)}} for citation in reversed(by_document.values())]
