"""Speech engines for calls: synthesis, recognition and turn detection.

The protocols and the error are in ``base.py``; every engine raises only
``SpeechUnavailable``. The engines, one module each:

* ``openai.py`` — OpenAI-compatible ``/audio/speech`` (streamed 24 kHz PCM) and
  ``/audio/transcriptions`` (a WAV per turn), over the pool in ``http.py``;
* ``turns.py`` — the HTTP turn detector (our small JSON protocol);
* ``espeak.py`` — local synthesis with eSpeak NG (16 kHz);
* ``sphinx.py`` — local recognition with PocketSphinx (both local ones in ``local.py``).

Build the engines a call uses with ``app.telephony.speech_engines.engines_for_calls``.
"""

# Each module's public names are listed once, in its ``__all__``, and offered here.
from adapters.speech import base
from adapters.speech.base import *  # noqa: F403

__all__ = [
    *base.__all__,
]
