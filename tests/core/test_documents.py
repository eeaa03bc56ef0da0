"""Documents: extraction of each format, chunk offsets and cover, snippets, fuzzing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.documents import (
    DocumentError,
    EmptyDocument,
    NotText,
    UnsupportedFormat,
    chunk_text,
    extract,
    query_terms,
    search_expression,
    snippet,
)

# --- plain text ---------------------------------------------------------------------


def test_plain_text_keeps_paragraphs_and_collapses_spaces():
    raw = b"\xef\xbb\xbfFirst   line\r\nsame\tparagraph  \r\n\r\n\r\n\r\nSecond\xc2\xa0one\n"
    assert extract(raw, "text/plain") == "First line\nsame paragraph\n\nSecond one"


def test_form_feeds_and_unicode_separators_are_breaks():
    assert extract("a\x0cb\u2028c\u2029d", "text/plain") == "a\n\nb\nc\n\nd"


def test_text_is_composed_to_nfc():
    assert extract("Cafe\u0301", "text/plain") == "Caf\u00e9"


def test_declared_latin_1_is_decoded():
    assert extract(b"caf\xe9", "text/plain", charset="ISO-8859-1") == "caf\u00e9"


@pytest.mark.parametrize("raw", [b"\x7fELF\x00\x00binary", b"\xff\xfe\xfd not utf-8",
                                 "\x01\x02\x03\x04 mostly control".encode()],
                         ids=["nul", "invalid-utf8", "control"])
def test_binary_content_is_not_text(raw):
    with pytest.raises(NotText):
        extract(raw, "text/plain")


@pytest.mark.parametrize(("raw", "named"), [
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "a PDF"),
    (b"PK\x03\x04\x14\x00\x06\x00word/document.xml", "Word"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00", "older Word or Excel"),
])
def test_a_format_people_expect_to_be_read_is_named_in_its_refusal(raw, named):
    with pytest.raises(NotText) as refused:
        extract(raw, "text/plain")
    assert named in refused.value.message and "plain text, Markdown or HTML" in (
        refused.value.message)


def test_unpaired_surrogates_are_not_text():
    with pytest.raises(NotText):
        extract("broken \ud800 text", "text/plain")


def test_a_few_stray_control_characters_are_dropped():
    text = "word " * 100 + "\x07bell"
    assert extract(text, "text/plain").endswith("word bell")


@pytest.mark.parametrize("media_type", ["application/pdf", "image/png", "TEXT/PLAIN", ""])
def test_unknown_media_types_are_refused(media_type):
    with pytest.raises(UnsupportedFormat):
        extract(b"hello", media_type)


def test_unknown_charsets_are_refused():
    with pytest.raises(UnsupportedFormat):
        extract(b"hello", "text/plain", charset="rot13")


@pytest.mark.parametrize("raw,media_type", [(b"", "text/plain"), (b" \n\t\r\n ", "text/plain"),
                                            (b"<script>x()</script>", "text/html"),
                                            (b"---\n\n***\n", "text/markdown")])
def test_documents_without_text_are_empty(raw, media_type):
    with pytest.raises(EmptyDocument):
        extract(raw, media_type)


# --- Markdown -----------------------------------------------------------------------

MARKDOWN = """---
title: front matter is metadata
---
# Opening hours #

We are **open** from _9am_ to 5pm, see [the map](https://example.org/map).
![Front door](door.png)

* Monday to Friday
1. Saturday by `appointment_only`
- [x] done \\*not emphasis\\*

> Quoted advice.

| Day | Hours |
|-----|:-----:|
| Sun | closed |

Setext heading
--------------
```python
def code(): return 2 * 3 * 4
```
<!-- a comment -->
[ref]: https://example.org
"""


def test_markdown_keeps_text_and_headings_and_drops_markup():
    assert extract(MARKDOWN, "text/markdown") == (
        "Opening hours\n\n"
        "We are open from 9am to 5pm, see the map.\nFront door\n\n"
        "Monday to Friday\nSaturday by appointment_only\ndone *not emphasis*\n\n"
        "Quoted advice.\n\n"
        "Day | Hours\nSun | closed\n\n"
        "Setext heading\n\n"
        "def code(): return 2 * 3 * 4"
    )


def test_markdown_snake_case_words_are_not_emphasis():
    assert extract("call my_function_name now", "text/markdown") == "call my_function_name now"


@pytest.mark.parametrize(("markdown", "text"), [
    ("**a **b** c", "**a b c"),  # a strong span cannot hold another's opening mark
    ("*2 * 3 = 6*", "2 * 3 = 6"),
    ("_see my_var here_", "see my_var here"),
    ("~~gone~~ and __strong__", "gone and strong"),
    ("[Foo](https://en.wikipedia.org/wiki/Foo_(bar)) and ![x](a.png)", "Foo and x"),
    ("# C#", "C#"),
    ("## Title ##   ", "Title"),
    ("# #\nnext", "next"),
    ("a <!-- one --> b <!-- two\nlines --> c", "a b c"),
    ("a <!-- never closed", "a <!-- never closed"),
    ("| a |\n  | --- | :-: |  \n| b |", "a\nb"),
])
def test_markdown_inline_and_heading_rules(markdown, text):
    assert extract(markdown, "text/markdown") == text


# Markup that opens and never closes, repeated: a pattern that scanned from each opener
# to the end of the line or document would take hours on an upload of this size.
UNCLOSED_MARKUP = ("**a ", "__a ", "~~a ", "*a ", "_a ", "<!--", "![", "[a", "[a](", "![a](",
                   "<http:", "``a `", "*a * b", "_a_b ", "**_~~`[!(<")


def test_markdown_of_unclosed_markup_is_converted_whole():
    for opener in UNCLOSED_MARKUP:
        upload = opener * (128_000 // len(opener))
        assert extract(upload, "text/markdown").count("a") == upload.count("a")
    for line in ("# a" + " " * 128_000 + "x", " " * 128_000 + "x", "|-|-" + " " * 128_000 + "x"):
        assert extract(line, "text/markdown").endswith("x")


def test_html_with_long_runs_of_blanks_is_converted_whole():
    for blanks in (" " * 512_000, "\t " * 256_000):
        assert extract(f"<pre>a{blanks}b</pre>", "text/html") == "a b"
    assert extract("<b> </b>" * 64_000 + "end", "text/html") == "end"


# --- HTML ---------------------------------------------------------------------------

HTML = """<!doctype html><html><head><title>Clinic</title>
<style>p { color: red }</style><script>if (a < b) { alert("no") }</script></head>
<body><nav>Home</nav><h1>Fees &amp; hours</h1>
<p>A visit costs &pound;40
   and lasts &#x33;0 minutes.</p>
<div>Line one<br>Line two</div>
<ul><li>Cash</li><li>Card <b>only</b> <i>here</i></li></ul>
<table><tr><th>Day</th><th>Open</th></tr><tr><td>Mon</td><td>9&ndash;5</td></tr></table>
<pre>keep
  lines</pre><noscript>Enable JavaScript</noscript><!-- hidden --></body></html>"""


def test_html_becomes_text_with_block_breaks_and_decoded_entities():
    assert extract(HTML, "text/html") == (
        "Clinic\n\nHome\n\nFees & hours\n\n"
        "A visit costs \u00a340 and lasts 30 minutes.\n\n"
        "Line one\nLine two\n\nCash\nCard only here\n\n"
        "Day | Open\nMon | 9\u20135\n\nkeep\nlines"
    )


def test_html_with_a_malformed_declaration_is_refused_with_our_error():
    with pytest.raises(DocumentError):
        extract("<![foo[ bar ]]> text", "text/html")


# --- chunking -----------------------------------------------------------------------


def test_short_text_is_one_chunk():
    [chunk] = chunk_text("Just a line.")
    assert (chunk.ordinal, chunk.start, chunk.end, chunk.text) == (0, 0, 12, "Just a line.")


def test_chunks_end_at_paragraphs_when_one_is_near():
    paragraphs = ["Paragraph %d. " % i + "word " * 90 for i in range(6)]
    text = "\n\n".join(p.strip() for p in paragraphs)
    chunks = chunk_text(text)
    assert all(text[c.end:c.end + 2] in ("\n\n", "") for c in chunks)


def test_chunks_end_at_sentences_and_overlap_starts_at_one():
    text = " ".join(f"Sentence number {i} says something useful." for i in range(80))
    chunks = chunk_text(text)
    assert len(chunks) > 3
    for before, after in zip(chunks, chunks[1:]):
        assert before.text.endswith(".")
        assert after.text.startswith("Sentence")
        assert 0 < before.end - after.start <= 150


def test_a_word_longer_than_a_passage_is_cut_inside():
    chunks = chunk_text("x" * 2000)
    assert [len(c.text) for c in chunks] == [800, 800, 400]


def test_chunking_is_deterministic():
    text = extract(HTML * 20, "text/html")
    assert chunk_text(text) == chunk_text(text)


texts = st.text(st.sampled_from("ab .\n\t!?\u2026\u00a0xyz\u2029") | st.characters(), max_size=3000)


@settings(max_examples=300, deadline=None)
@given(texts, st.integers(8, 900), st.data())
def test_chunks_are_exact_bounded_and_cover_the_text(text, target, data):
    overlap = data.draw(st.integers(0, target // 2 - 1))
    chunks = chunk_text(text, target=target, overlap=overlap)
    covered = set()
    for index, chunk in enumerate(chunks):
        assert chunk.ordinal == index
        assert text[chunk.start:chunk.end] == chunk.text
        assert 0 < len(chunk.text) <= target
        covered.update(range(chunk.start, chunk.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    for before, after in zip(chunks, chunks[1:]):
        assert before.start < after.start and before.end < after.end
        assert before.end - after.start <= overlap
        assert text[before.end:after.start].strip() == ""


# --- fuzzing extraction -------------------------------------------------------------

media_types = st.sampled_from(["text/plain", "text/markdown", "text/html"])
markupish = st.text(st.sampled_from("<>/!-[]()*_`#|&;=\"' \nabpscriptdiv\x00\x01\ud800"),
                    max_size=300)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=600) | st.text(max_size=600) | markupish, media_types,
       st.sampled_from([None, "utf-8", "latin-1", "bogus"]))
def test_extraction_raises_only_its_own_error(content, media_type, charset):
    try:
        text = extract(content, media_type, charset=charset)
    except DocumentError as error:
        assert error.message and error.reason
        return
    assert text and text == text.strip() and "\n\n\n" not in text and "\r" not in text
    text.encode("utf-8")  # storable as PostgreSQL text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=600))
def test_extraction_is_idempotent_on_plain_text(content):
    try:
        text = extract(content, "text/plain")
    except DocumentError:
        return
    assert extract(text, "text/plain") == text


# --- queries and snippets -----------------------------------------------------------


def test_query_terms_drop_stop_words_and_repeats():
    assert query_terms("What are the OPENING hours, and the hours on Saturday?") == [
        "opening", "hours", "saturday"]
    assert query_terms("is it the one that was?") == ["one"]
    assert query_terms("to be or not to be") == []
    assert search_expression(["opening", "hours"]) == "opening or hours"


def test_snippet_shows_the_part_with_the_query_terms():
    text = "Filler sentence here. " * 30 + "Dr Wojciechowski takes calls on Mondays. " + \
        "More filler. " * 30
    cut = snippet(text, "When does Wojcehowski take calls?")
    assert "Wojciechowski takes calls on Mondays." in cut
    assert len(cut) <= 240 and cut.startswith("\u2026") and cut.endswith("\u2026")


def test_snippet_of_a_short_passage_is_the_passage():
    assert snippet("Open  9 to 5.\n\nClosed Sundays.", "sunday") == "Open 9 to 5. Closed Sundays."


@given(st.text(max_size=1500), st.text(max_size=80), st.integers(0, 400))
@settings(max_examples=200, deadline=None)
def test_snippets_are_bounded_and_taken_from_the_text(text, query, max_chars):
    cut = snippet(text, query, max_chars=max_chars)
    assert len(cut) <= max_chars
    assert cut.strip("\u2026") in " ".join(text.split())
