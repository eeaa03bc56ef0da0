"""Local recognition with PocketSphinx, for a deployment without any speech server.

What belongs here: ``LocalRecogniser`` and the decoding it sends to a worker process.
The decoder and its English model (acoustic model, dictionary, language model) come
from the ``pocketsphinx`` wheel: pip, no network at run time.

Two facts shape it:

* The bundled model is a 16 kHz one and refuses 8 kHz features, so a turn at 8000 Hz
  is first converted to 16 kHz with the resampler kernel. The model still hears only
  the telephone band then, and recognises it less well than wide-band speech.
* PocketSphinx holds the GIL while it decodes (measured: the event loop stalled for
  the whole decode, hundreds of milliseconds), which would stop every call's audio.
  So decoding runs in anyio's worker processes (``anyio.to_process``); each worker
  builds its decoder once (about a second) and keeps it for later turns.
"""

from __future__ import annotations

import anyio
import anyio.to_process
from anyio import BrokenWorkerProcess

from adapters.speech.base import SpeechUnavailable, whole_samples
from kernels.energy import rms
from kernels.resample import Resampler

__all__ = ["MODEL_RATE", "LocalRecogniser"]

ENGINE = "local PocketSphinx"
MODEL_RATE = 16000  #: the bundled en-us model's rate
#: A turn quieter than this (-60 dBFS) holds nothing to recognise; the voice
#: pipeline's own speech threshold (``voice.phone.speech_rms``) is far above it.
SILENCE_RMS = 0.001

_decoder = None  # in a worker process: the decoder, built on its first turn


def decode(pcm16: bytes) -> str:
    """The words in 16 kHz PCM16 (runs in a worker process)."""
    global _decoder
    if _decoder is None:
        try:
            from pocketsphinx import Decoder
        except ImportError as exc:
            raise SpeechUnavailable("is not installed: pip install pocketsphinx",
                                    engine=ENGINE) from exc
        try:
            _decoder = Decoder(samprate=MODEL_RATE, loglevel="FATAL")
        except RuntimeError as exc:
            raise SpeechUnavailable(f"cannot load its model: {exc}", engine=ENGINE) from exc
    _decoder.start_utt()
    try:
        _decoder.process_raw(pcm16, full_utt=True)
    finally:
        _decoder.end_utt()
    hypothesis = _decoder.hyp()
    return hypothesis.hypstr.strip() if hypothesis is not None else ""


class LocalRecogniser:
    """PocketSphinx with its bundled US English model."""

    async def transcribe(self, pcm16: bytes, sample_rate: int) -> str:
        """The words of one turn ('' for nothing heard)."""
        pcm16 = whole_samples(pcm16, sample_rate)
        if not pcm16 or rms(pcm16) < SILENCE_RMS:
            return ""  # the decoder "hears" words in digital silence
        if sample_rate != MODEL_RATE:
            pcm16 = Resampler(sample_rate, MODEL_RATE).process(pcm16)
        try:
            return await anyio.to_process.run_sync(decode, pcm16)
        except BrokenWorkerProcess as exc:
            raise SpeechUnavailable(f"its worker process failed ({exc})", engine=ENGINE) from exc
        except SpeechUnavailable:
            raise
        except Exception as exc:  # anything the decoder raised, brought back by pickle
            raise SpeechUnavailable(f"failed: {exc}", engine=ENGINE) from exc
