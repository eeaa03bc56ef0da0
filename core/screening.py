"""The screening list: how names are normalised, pasted and checked.

spec: telephony.md "Screening list" — an account may keep a list of names (its
conflicts). "Spelling, punctuation, titles, company endings and word order are ignored
when checking." While an account keeps a list, a call on its lines cannot be put
through to anybody until the caller's name was checked and is clear.

Three steps, all pure:

* ``normalise_name`` turns any text into a normal form: accents and case removed,
  punctuation gone, titles (Mr, Dr, …) and company endings (Ltd, GmbH, …) dropped,
  the remaining words sorted. Two spellings of one name share a normal form. The app
  stores the normal form beside each name.
* ``parse_pasted_names`` splits a pasted request into new names, skipping blanks and
  names already present (by normal form).
* ``check_name`` compares a caller's name with the stored normal forms and gives a
  ``Verdict``; ``transfer_allowed`` turns the verdict into the transfer gate.

The list is never read out and the caller is never told a check happened: nothing
here produces text for the caller.
"""

from __future__ import annotations

__all__ = [
    "MATCH_THRESHOLD",
    "MAX_NAME_LENGTH",
    "MAX_NAMES_PER_REQUEST",
    "PastedNames",
    "ScreeningError",
    "ScreeningName",
    "Verdict",
    "check_name",
    "normalise_name",
    "parse_pasted_names",
    "transfer_allowed",
]

import enum
import unicodedata
from collections.abc import Iterable

from rapidfuzz import fuzz, process

from .records import frozen

# spec: telephony.md "Limits" — "Screening names per request: 2000, each 200 characters".
MAX_NAMES_PER_REQUEST = 2000
MAX_NAME_LENGTH = 200

#: The lowest rapidfuzz ``token_set_ratio`` (0–100) between two normal forms that
#: counts as a match. 90 lets a letter or two differ in a full name ("Jon Smith",
#: "John Smith"), and a name whose words are all in the other counts in full ("Smith"
#: listed and "John Smith" ringing; "Acme Ltd" ringing and "Acme Widgets Ltd"
#: listed): a false match only sends the call to a person, a missed one puts a
#: conflict through.
MATCH_THRESHOLD = 90.0

# Words that say what someone is rather than who: dropped wherever they stand.
_TITLES = frozenset(
    "mr mrs ms miss mx master dr doctor prof professor sir dame lord lady rev revd "
    "reverend fr father hon honourable rt right esq qc kc".split()
)
# Legal forms of companies, after punctuation is gone ("L.L.P." is "llp" by then).
_COMPANY_ENDINGS = frozenset(
    "ltd limited llp llc lp inc incorporated plc gmbh mbh ag kg sa sarl sas srl spa "
    "bv nv pty pte co company corp corporation cie".split()
)
# Connecting words: "Smith & Co", "Smith and Co" and "The Smith Company" are one firm.
_CONNECTORS = frozenset(("and", "the"))
_IGNORED_WORDS = _TITLES | _COMPANY_ENDINGS | _CONNECTORS

# Characters removed without leaving a gap: "O'Brien" is "obrien", "S.A." is "sa".
_JOINING = frozenset("'\u2018\u2019\u02bc`.")

# Letters that Unicode does not decompose into a base letter and an accent.
_LETTERS = str.maketrans(
    {"ø": "o", "đ": "d", "ł": "l", "æ": "ae", "œ": "oe", "þ": "th", "ð": "d", "ı": "i"}
)


class ScreeningError(ValueError):
    """A pasted request the spec does not accept: too many names, or none at all."""

    def __init__(self, message: str, code: str = "too_many_names") -> None:
        super().__init__(message)
        self.code = code


class Verdict(enum.Enum):
    """The result of checking a caller's name (spec: telephony.md "Screening list")."""

    #: Checked against the list and nothing came close.
    CLEAR = "clear"
    #: Close to a listed name: a person must handle the call.
    MATCH = "match"
    #: The name given is not enough to check (empty, a surname alone, initials).
    NOT_CHECKED = "not_checked"


def normalise_name(text: str) -> str:
    """Return the normal form of a name: lower-case ASCII-ish words, sorted, joined by
    single spaces; ``""`` when nothing of a name is left.

    Titles, company endings and "and"/"the" are dropped wherever they stand, unless
    nothing else would remain ("Lord" alone stays "lord"). Wherever, not only at the
    front: the words are sorted, so a position rule would not survive normalising
    twice. A surname that is also a title ("Jane Lord") loses it and may become a
    surname alone — not checked, which keeps the call from being put through.
    Idempotent; never raises.
    """
    words = _words(text)
    kept = [word for word in words if word not in _IGNORED_WORDS]
    return " ".join(sorted(kept or words))


def _words(text: str) -> list[str]:
    # Decompose, drop the accents, fold the case, then decompose once more: folding can
    # produce letters that decompose again ("ẞ" becomes "ss", "İ" carries a dot).
    folded = _strip_marks(_strip_marks(text).casefold().translate(_LETTERS))
    kept = []
    for char in folded:
        if char in _JOINING:
            continue
        # Hyphens, "&", commas, brackets and every other symbol separate words.
        kept.append(char if char.isalnum() else " ")
    return "".join(kept).split()


def _strip_marks(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def _names_a_company(text: str) -> bool:
    return any(word in _COMPANY_ENDINGS for word in _words(text))


def _is_checkable(text: str, normal_form: str) -> bool:
    # spec: "a caller giving only a surname counts as not checked". Initials do not
    # count as words, so "J Smith" is a surname alone. A company's name is whole in one
    # word once its ending is dropped: "Acme Ltd" is checkable, "Acme" is not.
    words = [word for word in normal_form.split() if len(word) > 1]
    if len(words) >= 2:
        return True
    return len(words) == 1 and _names_a_company(text)


def check_name(
    given: str | None, listed: Iterable[str], *, threshold: float = MATCH_THRESHOLD
) -> Verdict:
    """Check the name a caller gave against the list's normal forms.

    ``listed`` holds the stored normal forms (from ``normalise_name``). An empty list
    gives ``CLEAR``, but an account with no list never needs a check: see
    ``transfer_allowed``. Give the verdict to ``transfer_allowed`` next.
    """
    if not given:
        return Verdict.NOT_CHECKED
    normal_form = normalise_name(given)
    if not _is_checkable(given, normal_form):
        return Verdict.NOT_CHECKED
    best = process.extractOne(
        normal_form,
        listed,
        scorer=fuzz.token_set_ratio,
        processor=None,
        score_cutoff=threshold,
    )
    return Verdict.CLEAR if best is None else Verdict.MATCH


def transfer_allowed(list_exists: bool, verdict: Verdict | None) -> bool:
    """Whether a call may be put through to a person.

    spec: "While an account keeps a list, a call on its lines cannot be put through to
    anybody until checked and clear; never checked counts as not clear. An account
    with no list is unaffected." ``verdict`` is ``None`` when no check was made.
    """
    if not list_exists:
        return True
    return verdict is Verdict.CLEAR


@frozen
class ScreeningName:
    """One name to store: as pasted (cut at 200 characters) and its normal form."""

    name: str
    normal_form: str


@frozen
class PastedNames:
    """The outcome of one pasted request: the names to add, in pasted order, and how
    many lines named something already present (or nothing at all)."""

    added: tuple[ScreeningName, ...]
    skipped: int

    @property
    def added_count(self) -> int:
        return len(self.added)


def parse_pasted_names(text: str, present: Iterable[str] = ()) -> PastedNames:
    """Split a pasted request into names to add.

    One name per line; blank lines are not names. Each name is trimmed and cut at 200
    characters. A name whose normal form is already in ``present`` (the stored normal
    forms), or earlier in the same paste, is skipped, as is a line of punctuation alone.
    More than 2000 names, or no name at all, raises ``ScreeningError`` and nothing is
    added.
    """
    lines = [line.strip() for line in text.splitlines()]
    names = [line[:MAX_NAME_LENGTH].strip() for line in lines if line]
    if len(names) > MAX_NAMES_PER_REQUEST:
        raise ScreeningError(f"at most {MAX_NAMES_PER_REQUEST} names per request, not {len(names)}")
    if not any(normalise_name(name) for name in names):
        # Nothing to add is a mistake in the paste (an empty box, a stray dash), not a
        # request that succeeded in adding nothing.
        raise ScreeningError("paste at least one name, one per line", code="no_names")
    seen = set(present)
    added = []
    for name in names:
        normal_form = normalise_name(name)
        if not normal_form or normal_form in seen:
            continue
        seen.add(normal_form)
        added.append(ScreeningName(name, normal_form))
    return PastedNames(tuple(added), len(names) - len(added))
