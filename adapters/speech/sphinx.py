"""Local recognition with PocketSphinx, for a deployment without any speech server.

What belongs here: ``LocalRecogniser`` and the decoding it sends to a worker process.
The decoder and its English model (acoustic model, dictionary, language model) come
from the ``pocketsphinx`` wheel: pip, no network at run time.

Two facts shape it:

* The bundled model is a 16 kHz one and refuses 8 kHz features, so a turn at 8000 Hz
  is first converted to 16 kHz with the resampler kernel. The model still hears only
  the telephone band then, and recognises it less well than wide-band speech.
* A line's own language model (``line_model.py``) makes most of the difference for
  a caller: the general model spreads its odds over all of English. Each worker keeps
  the decoders of the few models it used last.
* The utterance is whole when it is decoded, so cepstral mean normalisation uses the
  whole turn (``cmn batch``) rather than adapting as it goes, which loses the first
  word of a short answer.
* The acoustic model's ``feat.params`` fixes the front end (filter bank, noise
  removal, normalisation): PocketSphinx lets it win over the same options given to
  ``Decoder``, which are silently ignored. Only search options (weights, beams) tune here.
* PocketSphinx holds the GIL while it decodes (measured: the event loop stalled for
  the whole decode, hundreds of milliseconds), which would stop every call's audio.
  So decoding runs in anyio's worker processes (``anyio.to_process``); each worker
  builds its decoder once (about a second) and keeps it for later turns.
"""

from __future__ import annotations

__all__ = ["MODEL_RATE", "LocalRecogniser"]

from pathlib import Path

import anyio
import anyio.to_process
from anyio import BrokenWorkerProcess

from adapters.speech.base import SpeechUnavailable, whole_samples
from adapters.speech.line_model import LineModel
from kernels.energy import rms
from kernels.resample import Resampler

ENGINE = "local PocketSphinx"
MODEL_RATE = 16000  #: the bundled en-us model's rate
#: A turn quieter than this (-60 dBFS) holds nothing to recognise; the voice
#: pipeline's own speech threshold (``voice.phone.speech_rms``) is far above it.
SILENCE_RMS = 0.001

#: How many decoders a worker process keeps (one per model; each holds the acoustic
#: model, tens of megabytes).
KEPT_DECODERS = 4
#: Language weight of a line's model: higher than the general model's 6.5, because a
#: small in-domain model deserves more trust against the acoustic scores.
LINE_MODEL_WEIGHT = 10.0

_decoders: dict[str | None, object] = {}  # in a worker process: model directory -> decoder


def _decoder(model_directory: str | None):
    decoder = _decoders.pop(model_directory, None)
    if decoder is None:
        try:
            from pocketsphinx import Decoder
        except ImportError as exc:
            raise SpeechUnavailable("is not installed: pip install pocketsphinx",
                                    engine=ENGINE) from exc
        options = {}
        if model_directory is not None:
            model = LineModel(Path(model_directory))
            options = {"lm": str(model.language_model), "dict": str(model.dictionary),
                       "lw": LINE_MODEL_WEIGHT}
        try:
            decoder = Decoder(samprate=MODEL_RATE, loglevel="FATAL", cmn="batch", **options)
        except RuntimeError as exc:
            raise SpeechUnavailable(f"cannot load its model: {exc}", engine=ENGINE) from exc
        while len(_decoders) >= KEPT_DECODERS:
            _decoders.pop(next(iter(_decoders)))  # the least recently used
    _decoders[model_directory] = decoder
    return decoder


def decode(pcm16: bytes, model_directory: str | None = None) -> str:
    """The words in 16 kHz PCM16, with a line's model or else the general one (runs in
    a worker process)."""
    decoder = _decoder(model_directory)
    # The front end keeps what it learnt of the last turn's noise (``remove_noise``)
    # into the next: without a fresh start, what a turn is heard to say would depend
    # on which turns, from which calls, this worker decoded before.
    decoder.reinit_feat()
    decoder.start_utt()
    try:
        decoder.process_raw(pcm16, full_utt=True)
    finally:
        decoder.end_utt()
    hypothesis = decoder.hyp()
    return hypothesis.hypstr.strip() if hypothesis is not None else ""


class LocalRecogniser:
    """PocketSphinx with its bundled US English acoustic model, and with a line's own
    language model when ``model`` is given (else the bundled general one)."""

    def __init__(self, model: LineModel | None = None) -> None:
        self.model = model

    def tuned(self, model: LineModel | None) -> "LocalRecogniser":
        """The same engine listening with ``model``."""
        return LocalRecogniser(model)

    async def transcribe(self, pcm16: bytes, sample_rate: int) -> str:
        """The words of one turn ('' for nothing heard)."""
        pcm16 = whole_samples(pcm16, sample_rate)
        if not pcm16 or rms(pcm16) < SILENCE_RMS:
            return ""  # the decoder "hears" words in digital silence
        if sample_rate != MODEL_RATE:
            pcm16 = Resampler(sample_rate, MODEL_RATE).process(pcm16)
        try:
            directory = str(self.model.directory) if self.model is not None else None
            return await anyio.to_process.run_sync(decode, pcm16, directory)
        except BrokenWorkerProcess as exc:
            raise SpeechUnavailable(f"its worker process failed ({exc})", engine=ENGINE) from exc
        except SpeechUnavailable:
            raise
        except Exception as exc:  # anything the decoder raised, brought back by pickle
            raise SpeechUnavailable(f"failed: {exc}", engine=ENGINE) from exc
