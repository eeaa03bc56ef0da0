"""eSpeak NG's English phoneme mnemonics as the CMU phone set.

PocketSphinx's bundled dictionary knows about 130,000 words; a line's own words
(names, streets, products) are often not among them. eSpeak NG knows how to say any
word, and says it in its ASCII mnemonics (``espeak_TextToPhonemes``): "thank" is
``T'aNk``. This table maps those mnemonics, as eSpeak NG's English voices use them, to
the 39 phones of the CMU dictionary the acoustic model was trained on: ``TH AE NG K``.
Stress and syllable marks carry nothing the acoustic model uses and are dropped.
"""

from __future__ import annotations

__all__ = ["UnknownPhoneme", "cmu_phones"]

_TABLE: dict[str, tuple[str, ...]] = {
    # consonants
    "p": ("P",), "b": ("B",), "t": ("T",), "d": ("D",), "k": ("K",), "g": ("G",),
    "f": ("F",), "v": ("V",), "T": ("TH",), "D": ("DH",), "s": ("S",), "z": ("Z",),
    "S": ("SH",), "Z": ("ZH",), "h": ("HH",), "m": ("M",), "n": ("N",), "N": ("NG",),
    "l": ("L",), "r": ("R",), "w": ("W",), "j": ("Y",), "tS": ("CH",), "dZ": ("JH",),
    "t#": ("T",), "d#": ("D",), "?": ("T",), "n-": ("AH", "N"), "l-": ("AH", "L"),
    "m-": ("AH", "M"), "r-": ("R",), "x": ("K",), "C": ("HH",), "z#": ("Z",), "s#": ("S",),
    "W": ("W",),
    # vowels
    "a": ("AE",), "aa": ("AE",), "a#": ("AH",), "a2": ("AH",), "A:": ("AA",),
    "A@": ("AA", "R"), "A": ("AA",), "@": ("AH",), "@2": ("AH",), "@5": ("AH",),
    "@-": ("AH",), "@L": ("AH", "L"), "3": ("ER",), "3:": ("ER",), "e": ("EH",),
    "E": ("EH",), "E2": ("EH",), "e@": ("EH", "R"), "eI": ("EY",), "i": ("IY",),
    "i:": ("IY",), "I": ("IH",), "I#": ("IH",), "I2": ("IH",), "i@": ("IH", "R"),
    "i@3": ("IH", "R"), "0": ("AA",), "0#": ("AA",), "O:": ("AO",), "O": ("AO",),
    "O@": ("AO", "R"), "o@": ("AO", "R"), "oU": ("OW",), "o": ("OW",), "OI": ("OY",),
    "u:": ("UW",), "u": ("UW",), "U": ("UH",), "U@": ("UH", "R"), "V": ("AH",),
    "VR": ("AH", "R"), "IR": ("IH", "R"), "aI": ("AY",), "aU": ("AW",),
    "aI@": ("AY", "ER"), "aI3": ("AY", "ER"), "aU@": ("AW", "ER"), "aU3": ("AW", "ER"),
    "eI@": ("EY", "ER"), "OI@": ("OY", "ER"),
}
_LONGEST = max(map(len, _TABLE))
#: Stress, syllable and pause marks: nothing to say.
_MARKS = frozenset("',%=_|; \t\n!")


class UnknownPhoneme(ValueError):
    """The mnemonics hold a phoneme the table does not map."""


def cmu_phones(mnemonics: str) -> tuple[str, ...]:
    """``mnemonics`` (eSpeak NG, English) as CMU phones, longest mnemonic first."""
    phones: list[str] = []
    at = 0
    while at < len(mnemonics):
        if mnemonics[at] in _MARKS:
            at += 1
            continue
        for size in range(min(_LONGEST, len(mnemonics) - at), 0, -1):
            found = _TABLE.get(mnemonics[at:at + size])
            if found is not None:
                phones += found
                at += size
                break
        else:
            raise UnknownPhoneme(f"no CMU phone for {mnemonics[at:]!r} in {mnemonics!r}")
    return tuple(phones)
