"""The built-in engines of a deployment without any speech server, in one place:
eSpeak NG synthesis (``espeak.py``) and PocketSphinx recognition (``sphinx.py``)."""

__all__ = ["LocalRecogniser", "LocalSynthesiser"]

from adapters.speech.espeak import LocalSynthesiser
from adapters.speech.sphinx import LocalRecogniser
