"""Search queries and citation snippets: which words of a query count, and where.

``query_terms`` drops the stop words PostgreSQL's ``english`` configuration drops (the
Snowball list), so a query the database would find empty is known to be empty before
any database work. ``search_expression`` joins the terms with ``or`` for
``websearch_to_tsquery``: a question rarely shares every word with its answer, so
retrieval matches any term and ranks by how many match.

``snippet`` cuts the part of a passage that best shows why it matched, for citations.
A word matches a term when equal, when one is the other's prefix of at least four
letters (book/booking), or within one edit for words of four letters or more
(two from eight): names are misspelt, and the search found them through trigrams.
"""

from __future__ import annotations

__all__ = ["STOP_WORDS", "MAX_TERMS", "SNIPPET_CHARS", "query_terms", "search_expression",
           "snippet"]

import re

from rapidfuzz.distance import OSA

#: PostgreSQL's ``english`` stop words (``tsearch_data/english.stop``, from Snowball).
STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his
himself she her hers herself it its itself they them their theirs themselves what which
who whom this that these those am is are was were be been being have has had having do
does did doing a an the and but if or because as until while of at by for with about
against between into through during before after above below to from up down in out on
off over under again further then once here there when where why how all any both each
few more most other some such no nor not only own same so than too very s t can will
just don should now
""".split())

#: Terms beyond this many are ignored: a pasted page is not a better question.
MAX_TERMS = 32
SNIPPET_CHARS = 240

_WORD = re.compile(r"\w+")
_ELLIPSIS = "\u2026"


def query_terms(query: str) -> list[str]:
    """The words of ``query`` that can match, case-folded, first occurrence first."""
    terms: list[str] = []
    for match in _WORD.finditer(query.casefold()):
        word = match.group()
        if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()) or word in terms:
            continue
        terms.append(word)
        if len(terms) == MAX_TERMS:
            break
    return terms


def search_expression(terms: list[str]) -> str:
    """Input for ``websearch_to_tsquery`` matching any of ``terms``."""
    return " or ".join(terms)


def snippet(text: str, query: str, *, max_chars: int = SNIPPET_CHARS) -> str:
    """At most ``max_chars`` of ``text`` around the words of ``query``, whitespace
    collapsed, cut at word boundaries, ``…`` where text was left out."""
    flat = " ".join(text.split())
    if len(flat) <= max_chars:
        return flat
    if max_chars < 8:
        return flat[:max_chars]
    width = max_chars - 2  # room for an ellipsis at each end
    hits = _hits(flat, query_terms(query))
    start = _best_window(hits, width) if hits else 0
    return _cut(flat, start, width)


def _matches(word: str, term: str) -> bool:
    if word == term:
        return True
    shorter = min(len(word), len(term))
    if shorter >= 4 and (word.startswith(term) or term.startswith(word)):
        return True
    if shorter < 4 or abs(len(word) - len(term)) > 2:
        return False
    allowed = 2 if shorter >= 8 else 1
    return OSA.distance(word, term, score_cutoff=allowed) <= allowed


def _hits(flat: str, terms: list[str]) -> list[tuple[int, int]]:
    """(position, term index) of each word of ``flat`` that matches a term."""
    hits: list[tuple[int, int]] = []
    for match in _WORD.finditer(flat.casefold()):
        word = match.group()
        for index, term in enumerate(terms):
            if _matches(word, term):
                hits.append((match.start(), index))
                break
    return hits


def _best_window(hits: list[tuple[int, int]], width: int) -> int:
    """Start of the window of ``width`` showing the most distinct terms, then the
    most hits; it begins a little before its first hit so the hit has context."""
    lead = width // 6
    best_start, best_key = 0, (-1, -1)
    for position, _ in hits[:200]:
        start = max(0, position - lead)
        inside = [term for at, term in hits if start <= at < start + width]
        key = (len(set(inside)), len(inside))
        if key > best_key:
            best_start, best_key = start, key
    return best_start


def _cut(flat: str, start: int, width: int) -> str:
    end = min(len(flat), start + width)
    start = max(0, end - width)  # a window near the end still uses its full width
    if start > 0:
        space = flat.find(" ", start, end)
        start = space + 1 if space != -1 else start
    if end < len(flat):
        space = flat.rfind(" ", start, end + 1)
        end = space if space > start else end
    head = _ELLIPSIS if start > 0 else ""
    tail = _ELLIPSIS if end < len(flat) else ""
    return head + flat[start:end].strip() + tail
