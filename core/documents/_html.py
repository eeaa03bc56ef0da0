"""HTML to plain text with the standard library's tolerant parser.

What a browser would not show is dropped (scripts, styles, templates, comments);
block elements become line breaks, and the big blocks (paragraphs, headings, lists,
tables, sections) paragraph breaks, so the chunker can cut where the author did.
Table cells on one row are joined with `` | ``. Character references are decoded by
the parser. Whitespace inside text collapses as a browser collapses it, except in
``<pre>``, where line breaks are content.
"""

from __future__ import annotations

__all__ = ["html_to_text"]

import re
from html.parser import HTMLParser

from core.documents._errors import NotText

#: elements whose content is never text for a reader
_HIDDEN = frozenset({"script", "style", "noscript", "template", "svg", "math", "object",
                     "iframe", "canvas", "select", "datalist"})
#: blocks that end a paragraph
_PARAGRAPHS = frozenset({
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "table", "ul", "ol", "dl",
    "section", "article", "header", "footer", "nav", "aside", "main", "figure", "form",
    "fieldset", "address", "details", "hr", "title", "body", "html",
})
#: blocks that end a line
_LINES = frozenset({"br", "div", "li", "tr", "dt", "dd", "figcaption", "summary", "caption",
                    "legend", "option", "thead", "tbody", "tfoot"})
_CELLS = frozenset({"td", "th"})
# Cells are marked with the unit separator while parsing (a control character, so it
# cannot come from the document: extraction refuses or drops those before), then
# turned into " | " between cells and nothing at a row's edges.
_CELL = "\x1f"
# A run begins where the blanks before a cell mark begin: tried from inside a long run
# of blanks, it would scan the rest of the run from each of them.
_CELL_RUN = re.compile(f"(?<![ \t])[ \t]*{_CELL}[{_CELL} \t]*")
_SPACE = re.compile(r"\s+")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden_depth = 0
        self.pre_depth = 0
        # Line ends owed before the next text: 1 for a line, 2 for a paragraph. Owing
        # them (rather than writing them at once) keeps </li><li> one line break.
        self.owed = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self.hidden_depth += 1
        elif tag == "pre":
            self.pre_depth += 1
        self._break(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self.hidden_depth = max(0, self.hidden_depth - 1)
        elif tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)
        if tag in _CELLS:
            if not self.owed:  # an empty cell at a row's start separates nothing
                self.parts.append(_CELL)
        else:
            self._break(tag)

    def handle_data(self, data: str) -> None:
        if self.hidden_depth:
            return
        if not self.pre_depth:
            data = _SPACE.sub(" ", data)
        if self.owed and data.strip():
            self.parts.append("\n" * self.owed)
            self.owed = 0
            data = data.lstrip(" ")
        if not self.owed:
            self.parts.append(data)

    def _break(self, tag: str) -> None:
        if tag in _PARAGRAPHS:
            self.owed = 2
        elif tag in _LINES:
            self.owed = max(self.owed, 1)

    def text(self) -> str:
        lines = "".join(self.parts).split("\n")
        return "\n".join(_CELL_RUN.sub(" | ", line.strip(f" \t{_CELL}")) for line in lines)


def html_to_text(source: str) -> str:
    """The text a reader of ``source`` would see, with its block structure."""
    collector = _TextCollector()
    try:
        collector.feed(source)
        collector.close()
    except AssertionError:
        # html.parser signals a few malformed declarations (``<![ ...``) this way.
        raise NotText("The HTML could not be read: it has a malformed declaration.") from None
    return collector.text()
