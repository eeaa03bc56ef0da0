"""What a line's recogniser should expect to hear, sans-IO.

A general language model spreads its odds over all of English; a caller on one line
says a few hundred words about one business. These modules turn what the line knows
into the material of a language model tuned to it:

- ``_words``: text as a recogniser hears it — lower case, numbers and times spelled
  out, one sentence a line.
- ``_corpus``: the sentences of one line's model: the agent's instructions and
  Libraries, the phrasing of its call tools, numbers, dates and times, and a small
  conversational set.
- ``_phonemes``: eSpeak NG's phoneme mnemonics as the CMU phone set, for words the
  bundled dictionary does not know.

Building the model and decoding with it are ``adapters.speech``'s business.
"""

__all__ = ["CORPUS_VERSION", "LineText", "UnknownPhoneme", "cmu_phones", "line_sentences",
           "spoken_sentences", "spoken_words"]

from ._corpus import CORPUS_VERSION, LineText, line_sentences
from ._phonemes import UnknownPhoneme, cmu_phones
from ._words import spoken_sentences, spoken_words
