"""Whether a caller withheld their number, from what the telephone system reports.

A withheld number is no caller's identity: every caller who withholds arrives with the
same text, so anything keyed on it (the per-number limit ``rate_from``, the diary's
change-by-telephone rule) would treat them all as one person. What is reported then:

* nothing, or a word — ``anonymous``, ``restricted``, ``private``, ``unknown``,
  ``unavailable``, ``withheld``, ``blocked`` (any case; Asterisk and SIP carriers);
* a Twilio-compatible carrier's spelled-out marker numbers, which look like E.164 and
  would pass as numbers: ``+266696687`` (ANONYMOUS), ``+7378742833`` (RESTRICTED),
  ``+8656696`` (UNKNOWN), ``+2562533`` (BLOCKED), ``+86282452253`` (UNAVAILABLE).

Anything else (a number, an extension, a SIP name) identifies one caller.
"""

from __future__ import annotations

__all__ = ["is_withheld"]

_WORDS = frozenset({"anonymous", "restricted", "private", "unknown", "unavailable",
                    "withheld", "blocked"})
_MARKERS = frozenset({"+266696687", "+7378742833", "+8656696", "+2562533", "+86282452253"})


def is_withheld(caller: str | None) -> bool:
    """True when ``caller`` (as the telephone system gave it) names nobody."""
    text = (caller or "").strip()
    return not text or text.lower() in _WORDS or text in _MARKERS
