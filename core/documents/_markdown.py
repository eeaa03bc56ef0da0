"""Markdown to plain text: keep what a reader reads, drop what only formats it.

Not a full CommonMark parser: retrieval needs the words and the paragraph structure,
not a rendering. Line by line, block markers go (heading hashes, quote marks, list
bullets, fences, rules, table separators, link definitions); headings stay as their
own paragraph; code stays as text, verbatim. Inside lines, links and images keep their
text, emphasis and code marks go, and backslash escapes resolve to the character.

An upload is whatever its author wrote, so every rule here takes time in proportion
to the text: no pattern may scan from each of many openers to the end of a line or of
the document. A span's body cannot run past the next mark that could open it again
(emphasis, link text and destination, autolinks), comments are cut by searching for
their ends once, and headings and table rules are stripped before they are matched.
"""

from __future__ import annotations

__all__ = ["markdown_to_text"]

import re

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r" {0,3}#{1,6}(?=[ \t]|$)")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_TABLE_RULE = re.compile(r"\|?[ \t]*:?-+:?(?:[ \t]*\|[ \t]*:?-+:?)+[ \t]*\|?")
_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*\S+.*$")
_QUOTE = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)+")
_BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")

# Spans whose content is literal: code spans and backslash escapes. They are set
# aside before the inline rules run, so `a_b_c` and \*stars\* are not read as emphasis.
_LITERAL = re.compile(r"(`+)(.+?)\1|\\([!-/:-@\[-`{-~])")
# A character every inline rule's match contains.
_INLINE_MARKS = re.compile(r"[`\\!\[<*_~]")
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")  # NUL never survives extraction's checks
# A link's destination may hold one level of parentheses, as Wikipedia's addresses do.
_DESTINATION = r"\((?:[^()]|\([^()]*\))*\)"
_IMAGE = re.compile(r"!\[([^\[\]]*)\]" + _DESTINATION)
_LINK = re.compile(r"\[([^\[\]]+)\](?:" + _DESTINATION + r"|\[[^\[\]]*\])")
_AUTOLINK = re.compile(r"<((?:https?|mailto|ftp):[^<>\s]+)>")
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
# Emphasis, strongest first. A body holds no mark of its own kind, except a single
# one that cannot open or close (between spaces, or inside a word for "_").
_EMPHASIS = (
    re.compile(r"(\*\*|__)(?=\S)((?:(?!\1).)+?)(?<=\S)\1"),
    re.compile(r"(~~)(?=\S)((?:(?!~~).)+?)(?<=\S)~~"),
    re.compile(r"(?<![\w*])(\*)(?=\S)((?:[^*]|(?<=\s)\*(?=\s))+?)(?<=\S)\*(?![\w*])"),
    re.compile(r"(?<![\w_])(_)(?=\S)((?:[^_]|(?<=\s)_(?=\s)|(?<=\w)_(?=\w))+?)(?<=\S)_(?![\w_])"),
)


def markdown_to_text(source: str) -> str:
    """The text of a Markdown document, line structure kept, markup dropped."""
    source = _FRONT_MATTER.sub("", source.replace("\r\n", "\n").replace("\r", "\n"), count=1)
    source = _without_comments(source)
    out: list[str] = []
    fence: str | None = None
    for line in source.split("\n"):
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
                out.append("")
            else:
                out.append(line)  # code is content: kept verbatim
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
            out.append("")
            continue
        out.extend(_block_line(line, previous=out[-1] if out else ""))
    return "\n".join(out)


def _block_line(line: str, previous: str) -> list[str]:
    """The output lines for one source line outside code fences."""
    if _TABLE_RULE.fullmatch(line.strip(" \t")) or _LINK_DEFINITION.match(line):
        return []
    if _SETEXT.match(line) and previous.strip():
        return [""]  # the underline of the heading above: a paragraph break after it
    if _RULE.match(line):
        return [""]
    heading = _ATX.match(line)
    if heading:
        return ["", _inline(_heading_text(line[heading.end():])), ""]
    line = _QUOTE.sub("", line)
    line = _BULLET.sub("", line)
    if line.strip().startswith("|"):
        return [_table_row(line)]
    return [_inline(line)]


def _without_comments(source: str) -> str:
    """``source`` without its ``<!-- … -->`` comments; an unclosed one is kept as text.
    Each comment ends at the first ``-->`` after it, as an HTML comment does."""
    kept: list[str] = []
    at = 0
    while (start := source.find("<!--", at)) != -1:
        end = source.find("-->", start + 4)
        if end == -1:
            break  # no later comment can close either
        kept.append(source[at:start])
        at = end + 3
    kept.append(source[at:])
    return "".join(kept)


def _heading_text(rest: str) -> str:
    """An ATX heading's text: what follows its hashes, without the optional closing
    hashes, which count only after a space (``# C#`` keeps its name)."""
    text = rest.strip(" \t")
    unclosed = text.rstrip("#")
    if not unclosed or unclosed[-1] in " \t":
        return unclosed.rstrip(" \t")
    return text


def _table_row(line: str) -> str:
    cells = line.strip().strip("|").split("|")
    return " | ".join(_inline(cell.strip()) for cell in cells)


def _inline(text: str) -> str:
    """Links and images to their text, emphasis and tags dropped, literals restored."""
    if not _INLINE_MARKS.search(text):
        return text  # most lines and table cells: no rule below could match
    literals: list[str] = []

    def set_aside(match: re.Match[str]) -> str:
        literals.append(match.group(2).strip() if match.group(1) else match.group(3))
        return f"\x00{len(literals) - 1}\x00"

    text = _LITERAL.sub(set_aside, text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _TAG.sub("", text)
    for pattern in _EMPHASIS:
        text = pattern.sub(r"\2", text)
    return _PLACEHOLDER.sub(lambda m: literals[int(m.group(1))], text)
