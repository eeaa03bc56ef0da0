"""Reading Markdown uploads: svc's converter against markdown-it-py, on prose and on
markup built to be slow.

markdown-it-py is the CommonMark parser a Python service would otherwise reach for to
get at an upload's text (it renders HTML, from which the text is then taken; only the
parse and render are timed here, a lower bound of its cost). Both are timed on one
core, in process: a megabyte of ordinary Markdown, and for each shape of unclosed or
repeated markup an upload of 128 KB and of 256 KB. Twice the input should take twice
the time; a row whose second figure is four times its first is quadratic.

    python -m benchmarks.document_reading
"""

from __future__ import annotations

import argparse
import time

from markdown_it import MarkdownIt

from core.documents._markdown import markdown_to_text

PROSE = ("# Opening hours\n\nWe are **open** from 8am to 6pm, Monday to Friday, and "
         "*Saturday mornings* by [appointment](https://example.org/book).\n\n"
         "- Parking is free for patients\n- The gate code is `4521`\n\n"
         "| Day | Hours |\n|---|---|\n| Sat | 9-1 |\n\n")
#: Markup that opens and never closes, or runs of what a pattern could try again and again.
HOSTILE = {
    "strong, never closed": "**a ",
    "emphasis, never closed": "*a ",
    "comments, never closed": "<!--",
    "images, never closed": "![",
    "link destinations": "[a](",
    "autolinks": "<http:",
    "code spans": "``a `",
    "table cells": "|a",
}
SIZES = (128_000, 256_000)


def _seconds(convert, text: str) -> float:
    started = time.perf_counter()
    convert(text)
    return time.perf_counter() - started


def run() -> None:
    commonmark = MarkdownIt("commonmark").enable("table")
    contenders = (("svc", markdown_to_text), ("markdown-it-py", commonmark.render))
    prose = PROSE * (1_000_000 // len(PROSE))
    print(f"{'input':<26} {'size':>8} " + " ".join(f"{name:>15}" for name, _ in contenders)
          + f" {'svc / peer':>11}")
    times = [_seconds(convert, prose) for _, convert in contenders]
    print(f"{'prose':<26} {len(prose):>8} " + " ".join(f"{t * 1000:>12.1f} ms" for t in times)
          + f" {times[0] / times[1]:>11.2f}")
    for name, opener in HOSTILE.items():
        for size in SIZES:
            text = opener * (size // len(opener))
            times = [_seconds(convert, text) for _, convert in contenders]
            print(f"{name:<26} {len(text):>8} "
                  + " ".join(f"{t * 1000:>12.1f} ms" for t in times)
                  + f" {times[0] / times[1]:>11.2f}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    run()
