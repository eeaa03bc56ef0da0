"""Local synthesis with eSpeak NG, for a deployment without any speech server.

What belongs here: ``LocalSynthesiser`` and the ctypes binding of the few eSpeak NG
calls it needs. The library and its voices come from the ``espeakng-loader`` wheel
(pip, no network at run time, no system package). eSpeak NG speaks at 22050 Hz; the
synthesiser converts to 16 kHz with the resampler kernel (``kernels/resample``, whose
22.05 → 16 kHz filter exists for this), because the contract allows only rates the
call's audio path converts, and 16 kHz keeps everything a telephone carries.

eSpeak NG keeps one global state per process (voice, callback), so synthesis is
serialised by a lock and runs in a worker thread: ctypes lets go of the GIL while the
library works, and eSpeak is fast (a sentence takes a few milliseconds), so a call
never waits long behind another.
"""

from __future__ import annotations

__all__ = ["ESPEAK_RATE", "LocalSynthesiser", "phoneme_mnemonics"]

import ctypes
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from adapters.speech.base import SpeechUnavailable
from kernels.resample import Resampler

ENGINE = "local eSpeak NG"
ESPEAK_RATE = 22050  #: what the library produces
OUTPUT_RATE = 16000  #: what the synthesiser hands out
CHUNK_BYTES = OUTPUT_RATE // 10 * 2  # 100 ms of output per chunk
FALLBACK_VOICE = "en"

# speak_lib.h
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_DONT_EXIT = 0x8000
_CHARS_UTF8 = 1
_ENDPAUSE = 0x1000
_EE_OK = 0
_PHONEMES_ASCII = 0  # espeak_TextToPhonemes: eSpeak's own mnemonics, not IPA
#: eSpeak NG adds random breath and jitter to some voices (the ``+f2`` variants among
#: them), and seeds its generator from the clock when it starts. Seeding it afresh
#: for every text keeps the clock out of the audio: a process that makes the same
#: texts in the same order makes the same sound, whatever the time.
_RANDOM_SEED = 1
_SYNTH_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                                   ctypes.c_void_p)


class _ESpeak:
    """The loaded library. One per process; every method runs under ``_LOCK``."""

    def __init__(self) -> None:
        try:
            import espeakng_loader
        except ImportError as exc:
            raise SpeechUnavailable("is not installed: pip install espeakng-loader",
                                    engine=ENGINE) from exc
        try:
            lib = ctypes.CDLL(espeakng_loader.get_library_path())
            data_parent = str(Path(espeakng_loader.get_data_path()).parent)
        except (OSError, RuntimeError) as exc:
            raise SpeechUnavailable(f"cannot be loaded: {exc}", engine=ENGINE) from exc
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                          ctypes.c_int]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
        lib.espeak_TextToPhonemes.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                              ctypes.c_int]
        lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
        lib.espeak_Synth.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint,
                                     ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                     ctypes.c_void_p, ctypes.c_void_p]
        rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data_parent.encode(),
                                     _INITIALIZE_DONT_EXIT)
        if rate != ESPEAK_RATE:
            raise SpeechUnavailable(f"did not start (it answered {rate})", engine=ENGINE)
        self._lib = lib
        self._chunks: list[bytes] = []
        self._callback = _SYNTH_CALLBACK(self._receive)  # kept: the library calls it
        lib.espeak_SetSynthCallback(self._callback)
        self._voice: str | None = None

    def _receive(self, wav, samples: int, _events) -> int:
        if samples > 0 and wav:
            self._chunks.append(ctypes.string_at(wav, 2 * samples))
        return 0  # go on

    def use_voice(self, voice: str) -> None:
        """``voice`` when eSpeak NG knows it, else its English voice."""
        if voice == self._voice:
            return
        if self._lib.espeak_SetVoiceByName(voice.encode()) != _EE_OK:
            voice = FALLBACK_VOICE
            if self._lib.espeak_SetVoiceByName(voice.encode()) != _EE_OK:
                raise SpeechUnavailable("has no English voice", engine=ENGINE)
        self._voice = voice

    def speak(self, text: str) -> bytes:
        """The whole of ``text`` as 22050 Hz PCM16."""
        data = text.replace("\0", " ").encode("utf-8") + b"\0"
        self._chunks = []
        self._lib.espeak_ng_SetRandSeed(_RANDOM_SEED)
        status = self._lib.espeak_Synth(data, len(data), 0, 0, 0, _CHARS_UTF8 | _ENDPAUSE,
                                        None, None)
        if status != _EE_OK:
            raise SpeechUnavailable(f"failed to speak (error {status})", engine=ENGINE)
        pcm, self._chunks = b"".join(self._chunks), []
        return pcm

    def mnemonics(self, word: str) -> str:
        """How the voice says ``word``, in eSpeak NG's ASCII phoneme mnemonics."""
        text = ctypes.create_string_buffer(word.replace("\0", " ").encode("utf-8") + b"\0")
        cursor = ctypes.c_char_p(ctypes.addressof(text))
        clauses = []
        while cursor.value:  # the library moves the cursor past each clause it read
            said = self._lib.espeak_TextToPhonemes(ctypes.byref(cursor), _CHARS_UTF8,
                                                   _PHONEMES_ASCII)
            clauses.append((said or b"").decode("ascii", "replace"))
        return " ".join(c for c in clauses if c)


_LOCK = threading.Lock()
_engine: _ESpeak | None = None


def _loaded() -> _ESpeak:
    """The library, loaded on first use (call with ``_LOCK`` held)."""
    global _engine
    if _engine is None:
        _engine = _ESpeak()
    return _engine


def _speak(text: str, voice: str) -> bytes:
    """Synthesise and convert to ``OUTPUT_RATE`` (run in a worker thread)."""
    with _LOCK:
        engine = _loaded()
        engine.use_voice(voice)
        pcm = engine.speak(text)
    return Resampler(ESPEAK_RATE, OUTPUT_RATE).process(pcm)


def phoneme_mnemonics(words: list[str], voice: str = "en-us") -> dict[str, str]:
    """How ``voice`` says each of ``words`` (eSpeak NG's mnemonics; blocking)."""
    with _LOCK:
        engine = _loaded()
        engine.use_voice(voice)
        return {word: engine.mnemonics(word) for word in words}


class LocalSynthesiser:
    """eSpeak NG, in process. ``voice``: an eSpeak NG voice name (``en-us``,
    ``en-gb``, ``de``...); a name it does not know (``alloy``) speaks English."""

    sample_rate = OUTPUT_RATE

    def __init__(self, voice: str = FALLBACK_VOICE) -> None:
        self.voice = voice

    async def stream(self, text: str) -> AsyncIterator[bytes]:
        """PCM16 at 16 kHz in 100 ms chunks (the whole text is synthesised first:
        it takes milliseconds)."""
        if not text.strip():
            return
        pcm = await anyio.to_thread.run_sync(_speak, text, self.voice)
        for start in range(0, len(pcm), CHUNK_BYTES):
            yield pcm[start:start + CHUNK_BYTES]
