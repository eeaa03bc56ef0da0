"""The conversation of a telephone call, sans-IO: the opening and the turns.

- ``_opening``: the words of the opening (greeting, notice, recording sentence).
- ``_dials``: the speech dials of a call and the conversation's fixed limits.
- ``_hearing``: ``SpeechDetector``, when the caller starts and stops speaking.
- ``_events``: the inputs the conversation is fed and the actions it returns.
- ``_conversation``: ``CallConversation``, the machine itself.
- ``_sentences``: an answer streamed as text, cut into sentences for synthesis.

The adapter (``adapters.voice``) owns the audio, the engines and the clock; it feeds
the machine and carries out its actions.
"""

# Each module's public names are listed once, in its ``__all__``; the package offers
# them all, and only some of the detector's and keypad's.
from . import _conversation, _dials, _events, _opening, _sentences
from ._conversation import *  # noqa: F403
from ._dials import *  # noqa: F403
from ._events import *  # noqa: F403
from ._hearing import ONSET_LOOKBACK_MS, Heard, SpeechDetector
from ._keys import KEY_PAUSE_SECONDS, KeyEntry, keys_text
from ._opening import *  # noqa: F403
from ._sentences import *  # noqa: F403

__all__ = [
    *_conversation.__all__,
    *_dials.__all__,
    *_events.__all__,
    *_opening.__all__,
    *_sentences.__all__,
    "KEY_PAUSE_SECONDS",
    "ONSET_LOOKBACK_MS",
    "Heard",
    "KeyEntry",
    "SpeechDetector",
    "keys_text",
]
