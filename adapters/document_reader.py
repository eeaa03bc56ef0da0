"""Reading an upload in a process of its own, killed when it takes too long.

An upload is text anyone with a Library writes, and turning it into text and passages
is CPU work: in the serving process it would hold the interpreter lock against the
event loop that paces live calls. So each upload is read by a fresh Python process
running this module. The upload goes in on its standard input and the answer comes
back on its standard output, pickled; both ends are this module, so the pickle is
trusted. A fresh process costs well under a tenth of a second, little beside an
upload, and it shares nothing with the workers that decode calls
(``anyio.to_process``): it never takes one warm with a decoder, and killing it at a
deadline loses nothing else.
"""

from __future__ import annotations

__all__ = ["ReaderFailed", "read_in_process"]

import pickle
import sys

import anyio

from core.documents import DocumentError, TextChunk, read_document


class ReaderFailed(Exception):
    """The reading process died, or answered with nothing this module writes."""


async def read_in_process(content: bytes | str, media_type: str,
                          charset: str | None = None) -> tuple[str, list[TextChunk]]:
    """``core.documents.read_document`` in a process of its own: the same answer, or the
    same ``DocumentError``; ``ReaderFailed`` when the process fails. Cancelling the
    caller kills the process."""
    request = pickle.dumps((content, media_type, charset), pickle.HIGHEST_PROTOCOL)
    done = await anyio.run_process([sys.executable, "-m", __name__], input=request,
                                   check=False)
    if done.returncode != 0:
        raise ReaderFailed(f"the reading process exited with {done.returncode}: "
                           f"{done.stderr.decode(errors='replace')[-300:]}")
    try:
        kind, value = pickle.loads(done.stdout)
    except Exception as error:
        raise ReaderFailed("the reading process answered with something unreadable") from error
    if kind == "refused":
        raise value
    return value


def _serve() -> None:
    """The reading process: one upload in, one answer out."""
    content, media_type, charset = pickle.load(sys.stdin.buffer)
    try:
        answer: tuple[str, object] = ("read", read_document(content, media_type, charset))
    except DocumentError as refusal:
        answer = ("refused", refusal)
    pickle.dump(answer, sys.stdout.buffer, pickle.HIGHEST_PROTOCOL)


if __name__ == "__main__":
    _serve()
