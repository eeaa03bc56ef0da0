"""Taking a secret out of text that may quote it, whole or in part.

An upstream that refuses a key often quotes it back — whole, cut ("sk-abc123"), or
masked the way providers mask keys ("sk-proj-****wxyz", "sk-abc...xyz") — and its
message is passed on. ``redact`` replaces, in such text:

* the secret itself;
* any word holding a run of at least ``MIN_FRAGMENT`` characters of the secret
  (a secret is random, so a match that long is the secret quoted, not a coincidence);
* any masked word: visible characters around a run of mask characters (``*``, dots,
  ``…``, ``•``), where what is visible before the mask begins the secret and what is
  visible after it ends the secret, at least ``MIN_VISIBLE`` characters in all.
"""

from __future__ import annotations

__all__ = ["MIN_FRAGMENT", "MIN_VISIBLE", "redact"]

import re
from collections.abc import Iterable

#: The shortest run of a secret's characters that counts as quoting it.
MIN_FRAGMENT = 8
#: The fewest characters a masked form must show of the secret to count as quoting it.
MIN_VISIBLE = 4

# A word: what a message puts between spaces, quotes and brackets.
_WORD = re.compile(r"""[^\s"'`<>()\[\]{},;]+""")
_MASK = re.compile(r"(?:[*•…]|\.{3,})+")
# Punctuation that ends a sentence rather than the quoted word.
_TRAILING = ".:!?"


def _quotes_fragment(word: str, secret: str) -> bool:
    size = min(MIN_FRAGMENT, len(secret))
    return any(word[start:start + size] in secret for start in range(len(word) - size + 1))


def _is_masked_form(word: str, secret: str) -> bool:
    masks = list(_MASK.finditer(word))
    if not masks:
        return False
    head, tail = word[:masks[0].start()], word[masks[-1].end():]
    if not (secret.startswith(head) and secret.endswith(tail)):
        return False
    return len(head) + len(tail) >= min(MIN_VISIBLE, len(secret))


def redact(text: str, secrets: Iterable[str | None], mark: str) -> str:
    """``text`` with every quote of the ``secrets`` (whole, in part or masked)
    replaced by ``mark``; empty secrets are ignored."""
    for secret in secrets:
        if not secret:
            continue
        text = text.replace(secret, mark)

        def replaced(found: re.Match[str], secret: str = secret) -> str:
            word = found.group()
            bare = word.rstrip(_TRAILING)
            for quoted, kept in ((bare, word[len(bare):]), (word, "")):
                if quoted and (_quotes_fragment(quoted, secret)
                               or _is_masked_form(quoted, secret)):
                    return mark + kept
            return word

        text = _WORD.sub(replaced, text)
    return text
