"""From an upload to plain text: decode, refuse what is not text, convert, normalise.

``extract`` is the one entry point. Its output is the text svc stores, chunks and
cites: offsets of chunks and passages index this string, so every later step
(chunking, search, snippets) sees exactly what was stored.

Normalised text has Unix line ends, single spaces inside lines, no spaces at line
ends, and at most one blank line in a row: a blank line is a paragraph break, a
single line end a softer break (list items, table rows, hard-wrapped lines).
"""

from __future__ import annotations

__all__ = ["MEDIA_TYPES", "extract", "decode", "normalise"]

import codecs
import re
import unicodedata

from core.documents._errors import EmptyDocument, NotText, UnsupportedFormat
from core.documents._html import html_to_text
from core.documents._markdown import markdown_to_text

#: The media types ``extract`` reads, each with its converter to plain text.
MEDIA_TYPES = ("text/plain", "text/markdown", "text/html")

# Character sets a raw upload may declare besides UTF-8. Others are refused rather than
# guessed at: a wrong guess stores mojibake that nobody can search for.
_CHARSETS = frozenset({"utf-8", "ascii", "latin-1", "iso8859-1", "cp1252"})

# Control characters other than tab, line feed, vertical tab, form feed and carriage
# return. A few stray ones are dropped; many of them mean the content is binary.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_MAX_CONTROL_SHARE = 0.02

# Paragraph and line separators of other conventions, mapped before spaces collapse.
_BREAKS = str.maketrans({"\u2029": "\n\n", "\x0c": "\n\n", "\u2028": "\n", "\x85": "\n",
                         "\x0b": "\n"})
_INLINE_SPACE = re.compile(r"[^\S\n]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def extract(content: bytes | str, media_type: str, *, charset: str | None = None) -> str:
    """The normalised plain text of ``content`` read as ``media_type``.

    ``content`` is raw bytes (decoded as ``charset``, UTF-8 when not given, a UTF-8
    byte-order mark allowed) or already-decoded text. Raises :class:`NotText`,
    :class:`UnsupportedFormat` or :class:`EmptyDocument`, and nothing else.
    """
    if media_type not in MEDIA_TYPES:
        raise UnsupportedFormat(
            f"Documents may be {', '.join(MEDIA_TYPES)}; {media_type!r} is not read.")
    text = decode(content, charset) if isinstance(content, bytes) else content
    _refuse_binary(text)
    # Stray control characters go before conversion, so the converters may use them
    # as private markers.
    text = _CONTROL.sub("", text)
    if media_type == "text/markdown":
        text = markdown_to_text(text)
    elif media_type == "text/html":
        text = html_to_text(text)
    text = normalise(text)
    if not text:
        raise EmptyDocument("The document has no text.")
    return text


# Formats people upload expecting them to be read, known by their first bytes: the
# refusal names the format and what to do, rather than only "binary".
_KNOWN_BINARY = (
    (b"%PDF-", "a PDF"),
    (b"PK\x03\x04", "a zip archive (Word, Excel and OpenDocument files are zip archives)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an older Word or Excel file"),
)


def decode(data: bytes, charset: str | None = None) -> str:
    """``data`` as text; :class:`NotText` when it is binary or not in ``charset``."""
    for magic, what in _KNOWN_BINARY:
        if data.startswith(magic):
            raise NotText(f"The document is {what}, which is not read. Save it as plain "
                          "text, Markdown or HTML and send that.")
    if b"\x00" in data:
        raise NotText("The document contains NUL bytes: it is binary, not text.")
    codec = _codec_name(charset)
    if codec == "utf-8":
        codec = "utf-8-sig"  # accepts and drops a byte-order mark; otherwise plain UTF-8
    try:
        return data.decode(codec)
    except UnicodeDecodeError:
        shown = charset or "UTF-8"
        raise NotText(f"The document is not valid {shown} text.") from None


def _codec_name(charset: str | None) -> str:
    if charset is None:
        return "utf-8"
    try:
        name = codecs.lookup(charset.strip().strip('"')).name
    except (LookupError, ValueError):
        name = ""
    if name not in _CHARSETS:
        raise UnsupportedFormat(
            f"Character set {charset!r} is not read; send UTF-8 (or Latin-1, Windows-1252).")
    return name


def _refuse_binary(text: str) -> None:
    if "\x00" in text:
        raise NotText("The document contains NUL characters: it is binary, not text.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NotText("The document contains unpaired surrogates: it is not valid text.") from None
    controls = sum(1 for _ in _CONTROL.finditer(text))
    if controls and controls > len(text) * _MAX_CONTROL_SHARE:
        raise NotText("The document is mostly control characters: it is binary, not text.")


def normalise(text: str) -> str:
    """Composed Unicode, Unix line ends, single inline spaces, at most one blank line."""
    text = unicodedata.normalize("NFC", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_BREAKS)
    text = _CONTROL.sub("", text)
    lines = (_INLINE_SPACE.sub(" ", line).strip() for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
