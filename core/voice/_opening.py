"""What a caller hears first: the opening of every call, composed from the line.

spec: telephony.md "Opening of every call" — the line's greeting, then its notice (or
the standard notice), with, when the line records, the sentence ``This call is
recorded.`` placed as its own sentence after the first sentence of the notice in
force. The standard notice ends by asking how it can help, unless the greeting has
already asked a question. The composition is pure so that the call and the compliance
view say exactly the same words.
"""

from __future__ import annotations

__all__ = ["RECORDING_SENTENCE", "STANDARD_NOTICE", "compose_opening", "notice_in_force"]

import re

#: What the standard notice tells a caller: an automated assistant is speaking, what
#: they say is written down and staff may read it, and they may ask for a person ...
_STANDARD_STATEMENTS = ("You are speaking with an automated assistant. What you say is "
                        "written down, and staff may read it. You can ask for a person at "
                        "any time.")
#: ... and then it asks how it can help.
STANDARD_NOTICE = f"{_STANDARD_STATEMENTS} How can I help?"

#: Said after the notice's first sentence on a line that records its calls.
RECORDING_SENTENCE = "This call is recorded."

# The end of a sentence: its closing mark (with any closing quote or bracket), then white
# space and the start of the next sentence (anything but a lower-case letter). A full
# stop inside "3.5" has no space after it; one after "e.g." is followed by lower case.
_SENTENCE_END = re.compile(r"""[.!?…]+["'”’)\]]*(?=\s+["'“‘(\[]?[^\sa-z])""")

# A text that ends by asking: a question mark, with any closing quote or bracket.
_ENDS_ASKING = re.compile(r"""\?["'”’)\]]*$""")


def notice_in_force(notice: str | None) -> str:
    """The line's own notice, or the standard one when it has none (or only spaces)."""
    text = " ".join((notice or "").split())
    return text or STANDARD_NOTICE


def _notice_after(greeting: str, notice: str | None) -> str:
    """The notice in force as it follows ``greeting``. A greeting that already asks
    ("..., how can I help?") leaves the standard notice's closing question out, so the
    caller is not asked twice; its three statements are always said. A line's own
    notice is said as written."""
    body = notice_in_force(notice)
    if body == STANDARD_NOTICE and _ENDS_ASKING.search(greeting):
        return _STANDARD_STATEMENTS
    return body


def _with_recording_sentence(notice: str) -> str:
    end = _SENTENCE_END.search(notice)
    if end is None:
        # A notice of a single sentence: the recording sentence follows it, and a
        # notice without a closing mark gets one so the sentence stands on its own.
        closed = notice if notice[-1] in ".!?…" else f"{notice}."
        return f"{closed} {RECORDING_SENTENCE}"
    first, rest = notice[: end.end()], notice[end.end():].strip()
    return f"{first} {RECORDING_SENTENCE} {rest}".rstrip()


def compose_opening(greeting: str | None, notice: str | None, *, recording: bool) -> str:
    """The opening as one text: greeting, then the notice in force (with the recording
    sentence after its first sentence when ``recording``), the caller asked how they
    can be helped once."""
    greeting_text = " ".join((greeting or "").split())
    body = _notice_after(greeting_text, notice)
    if recording:
        body = _with_recording_sentence(body)
    return f"{greeting_text} {body}" if greeting_text else body
