"""Cutting extracted text into overlapping passages for retrieval.

A passage should be about one thing and read well on its own, so cuts fall where
the text breaks: at a blank line if one is near the target length, else at the end
of a sentence, a line, or a word; only a word longer than half a passage is cut
inside. Each passage overlaps the one before by up to ``overlap`` characters,
starting at a sentence (or at least a word) inside that overlap, so an answer that
straddles a cut is still whole in one passage.

Guarantees (tested with Hypothesis): ``text[chunk.start:chunk.end] == chunk.text``;
every non-space character lies in some chunk; no chunk is longer than ``target``;
consecutive chunks overlap by at most ``overlap`` characters and only whitespace
lies between them when they do not; the same text always gives the same chunks.
"""

from __future__ import annotations

__all__ = ["TextChunk", "chunk_text", "TARGET_CHARS", "OVERLAP_CHARS"]

import re

from ..records import frozen

#: Passage length aimed at: a few paragraphs, small enough to cite, large enough to
#: carry an answer with its context.
TARGET_CHARS = 800
#: How much of the previous passage the next one repeats.
OVERLAP_CHARS = 150

# Where a passage may end, best first. Each pattern's cut is its match start, except
# the sentence end, which cuts after the punctuation (and closing quotes/brackets).
_PARAGRAPH_END = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*(?=\s)")
_LINE_END = re.compile(r"\n")
_WORD_END = re.compile(r"\s")
_ENDS = ((_PARAGRAPH_END, False), (_SENTENCE_END, True), (_LINE_END, False), (_WORD_END, False))

# Where the overlap may begin, best first: a sentence or line start, else a word start.
_SENTENCE_START = re.compile(r"(?:(?<=[.!?\u2026]\s)|(?<=\n))\S")
_WORD_START = re.compile(r"(?<=\s)\S")


@frozen
class TextChunk:
    """One passage: ``text == source[start:end]``; ``ordinal`` counts from 0."""

    ordinal: int
    start: int
    end: int
    text: str


def chunk_text(text: str, *, target: int = TARGET_CHARS,
               overlap: int = OVERLAP_CHARS) -> list[TextChunk]:
    """The passages of ``text``, in order. Text of only whitespace has none."""
    if target < 8 or not 0 <= overlap < target // 2:
        raise ValueError("chunking needs target >= 8 and 0 <= overlap < target / 2")
    chunks: list[TextChunk] = []
    start = _skip_space(text, 0)
    previous_end = 0
    while start < len(text):
        end = _passage_end(text, start, target)
        if end <= previous_end:
            # Only whitespace followed the overlap: start afresh after the last passage.
            start = _skip_space(text, previous_end)
            end = _passage_end(text, start, target)
        chunks.append(TextChunk(len(chunks), start, end, text[start:end]))
        if _skip_space(text, end) >= len(text):
            break
        previous_end = end
        start = _overlap_start(text, start, end, overlap)
    return chunks


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def _passage_end(text: str, start: int, target: int) -> int:
    """Where the passage starting at ``start`` should end: at most ``target`` later."""
    limit = start + target
    if limit >= len(text):
        return _trim_end(text, start, len(text))
    # Cuts before the half-way mark would make many small passages; look after it.
    floor = start + target // 2
    for pattern, after in _ENDS:
        cut = None
        for match in pattern.finditer(text, floor, limit + 1):
            position = match.end() if after else match.start()
            if position <= limit:
                cut = position
        if cut is not None:
            end = _trim_end(text, start, cut)
            if end > start:
                return end
    return limit  # one word longer than half a passage: cut inside it


def _overlap_start(text: str, start: int, end: int, overlap: int) -> int:
    """Where the next passage starts: inside the last ``overlap`` characters if a
    sentence or word begins there, else at the next non-space after ``end``."""
    low = max(end - overlap, start + 1)
    for pattern in (_SENTENCE_START, _WORD_START):
        match = pattern.search(text, low, end)
        if match:
            return match.start()
    return _skip_space(text, end)
