"""An answer streamed as text, cut into sentences for synthesis.

The agent's answer arrives in small pieces; synthesising each sentence as soon as it
is complete lets the caller hear the start of the answer while the rest is written.
``SentenceSplitter.feed`` returns the sentences a piece completes; ``flush`` the text
left at the end. A sentence ends at ``.``, ``!``, ``?``, ``…`` or ``;`` followed by
white space, or at a line break; a very long run without one is cut at a space so the
caller is not kept waiting.
"""

from __future__ import annotations

__all__ = ["MAX_SENTENCE_CHARS", "SentenceSplitter"]

import re

#: Past this many characters without a sentence end, the text is cut at the last space.
MAX_SENTENCE_CHARS = 240

# A sentence ends at the start of its run of marks, never inside it, so a long run is
# not scanned again from each of its marks.
_END = re.compile(r"""(?<![.!?…;])[.!?…;]+["'”’)\]]*\s+|\n+""")


class SentenceSplitter:
    """Collects streamed text and hands it back one sentence at a time."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, piece: str) -> list[str]:
        """Add ``piece``; return the sentences now complete, in order (maybe none)."""
        self._pending += piece
        sentences: list[str] = []
        while True:
            end = _END.search(self._pending)
            if end is None:
                break
            sentences.append(self._pending[: end.end()])
            self._pending = self._pending[end.end():]
        while len(self._pending) > MAX_SENTENCE_CHARS:
            cut = self._pending.rfind(" ", 0, MAX_SENTENCE_CHARS)
            cut = cut if cut > 0 else MAX_SENTENCE_CHARS
            sentences.append(self._pending[:cut])
            self._pending = self._pending[cut:]
        return [text for text in (" ".join(s.split()) for s in sentences) if text]

    def flush(self) -> str:
        """The text left over at the end of the answer ('' when none)."""
        text, self._pending = " ".join(self._pending.split()), ""
        return text
