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

from ._conversation import OPENING_UTTERANCE, CallConversation, Phase
from ._dials import (
    END_OF_TURN_PROBABILITY,
    MAX_TURN_SECONDS,
    PEER_SILENCE_SECONDS,
    TURN_HOLD_FACTOR,
    PhoneDials,
)
from ._events import (
    Action,
    CallerAudio,
    CallerHungUp,
    CaptureTurn,
    ConnectionLost,
    DropTurn,
    EndCall,
    Input,
    JudgeTurn,
    KeysPressed,
    Recognise,
    RecognitionFailed,
    Respond,
    Speak,
    SpeechFailed,
    SpeechFinished,
    SpeechPlaying,
    StopSpeaking,
    Transcribed,
    TurnJudgeFailed,
    TurnJudged,
)
from ._hearing import ONSET_LOOKBACK_MS, Heard, SpeechDetector
from ._keys import KEY_PAUSE_SECONDS, KeyEntry, keys_text
from ._sentences import MAX_SENTENCE_CHARS, SentenceSplitter
from ._opening import RECORDING_SENTENCE, STANDARD_NOTICE, compose_opening, notice_in_force

__all__ = [
    "END_OF_TURN_PROBABILITY",
    "MAX_SENTENCE_CHARS",
    "MAX_TURN_SECONDS",
    "ONSET_LOOKBACK_MS",
    "OPENING_UTTERANCE",
    "PEER_SILENCE_SECONDS",
    "RECORDING_SENTENCE",
    "STANDARD_NOTICE",
    "TURN_HOLD_FACTOR",
    "Action",
    "CallConversation",
    "CallerAudio",
    "CallerHungUp",
    "CaptureTurn",
    "ConnectionLost",
    "DropTurn",
    "EndCall",
    "Heard",
    "Input",
    "JudgeTurn",
    "KEY_PAUSE_SECONDS",
    "KeyEntry",
    "KeysPressed",
    "Phase",
    "PhoneDials",
    "Recognise",
    "RecognitionFailed",
    "Respond",
    "SentenceSplitter",
    "Speak",
    "SpeechDetector",
    "SpeechFailed",
    "SpeechFinished",
    "SpeechPlaying",
    "StopSpeaking",
    "Transcribed",
    "TurnJudgeFailed",
    "TurnJudged",
    "compose_opening",
    "keys_text",
    "notice_in_force",
]
