"""An upload read in a process of its own: the same answer as in process, the same
refusals, and a process that is gone once its reader is cancelled."""

from __future__ import annotations

import os

import anyio
import pytest

from adapters.document_reader import read_in_process
from core.documents import EmptyDocument, NotText, read_document
from tests.support.processes import children

pytestmark = pytest.mark.anyio


async def test_the_answer_is_the_one_read_in_process():
    upload = "# Hours\n\nWe are **open** from 9 to 5. [Map](https://example.org/map)\n" * 300
    assert await read_in_process(upload, "text/markdown") == read_document(
        upload, "text/markdown")
    raw = "Caf\xe9 opens at nine.".encode("latin-1")
    assert await read_in_process(raw, "text/plain", "latin-1") == read_document(
        raw, "text/plain", "latin-1")


async def test_refusals_come_back_as_themselves():
    with pytest.raises(EmptyDocument):
        await read_in_process("<p> </p>", "text/html")
    with pytest.raises(NotText) as refused:
        await read_in_process(b"\x00\x01\x02" * 100, "text/plain")
    assert refused.value.message


async def test_a_cancelled_reader_leaves_no_process_behind():
    before = children(os.getpid())
    with anyio.move_on_after(0.5):
        await read_in_process("- *a* [b](c)\n" * 2_000_000, "text/markdown")
    await anyio.sleep(0.2)
    assert children(os.getpid()) == before

