"""OpenAI-compatible speech engines: ``/audio/speech`` and ``/audio/transcriptions``.

What belongs here: ``OpenAISynthesiser`` (text in, 24 kHz PCM16 streamed out, as
OpenAI, Kokoro-FastAPI, openedai-speech and LocalAI serve it with ``response_format``
``pcm``) and ``OpenAIRecogniser`` (one turn as a WAV upload, ``{"text": ...}`` back, as
OpenAI, speaches (faster-whisper-server), whisper.cpp's server and vLLM answer; a
``text/plain`` answer, from a server that ignores ``response_format``, is the text). Both go through
``http.py`` and raise only ``SpeechUnavailable``.

spec: DESIGN.md "speech" — synthesis streamed, recognition per turn.
"""

from __future__ import annotations

__all__ = ["OpenAIRecogniser", "OpenAISynthesiser"]

import json
from collections.abc import AsyncIterator
from dataclasses import KW_ONLY, dataclass

import aiohttp

from adapters.speech.base import SpeechTimeouts, SpeechUnavailable, whole_samples
from adapters.speech.http import Endpoint, SpeechHttp, map_exceptions, request
from core.wav import pcm16_wav

#: OpenAI's ``pcm`` response format: 24 kHz, 16-bit signed little-endian, mono.
PCM_RATE = 24000
#: The longest ``input`` OpenAI accepts; longer text is spoken in several requests.
MAX_INPUT_CHARACTERS = 4096
_MAX_TRANSCRIPT_BYTES = 1024 * 1024
_TEXTUAL = ("application/json", "text/")  # an answer in words is not audio


def input_pieces(text: str, limit: int = MAX_INPUT_CHARACTERS) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, cut after a sentence where
    one ends in the second half of a piece, else at a space, else anywhere; [] when
    there is nothing to say (OpenAI refuses an empty input)."""
    pieces, rest = [], text.strip()
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind(mark) for mark in (". ", "! ", "? ", "\n")) + 1
        if cut <= limit // 2:
            cut = window.rfind(" ") + 1 or limit
        pieces.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    return pieces + [rest] if rest else pieces


@dataclass(eq=False)
class OpenAISynthesiser:
    """``POST {url}/audio/speech`` with ``response_format: pcm``, read as it streams.

    ``http``: the process's pool of speech connections (None: one connection a request).
    """

    sample_rate = PCM_RATE  # not a field: every answer of this API is PCM at this rate

    endpoint: Endpoint
    _: KW_ONLY
    model: str
    voice: str
    timeouts: SpeechTimeouts = SpeechTimeouts()
    http: SpeechHttp | None = None
    max_input: int = MAX_INPUT_CHARACTERS

    async def stream(self, text: str) -> AsyncIterator[bytes]:
        """PCM16 chunks of even length as they arrive (one request per ``max_input``
        characters).
        Leave early through ``contextlib.aclosing`` so the connection closes at once
        (barge-in)."""
        for piece in input_pieces(text, self.max_input):
            async for chunk in self._stream_piece(piece):
                yield chunk

    async def _stream_piece(self, text: str) -> AsyncIterator[bytes]:
        body = {"model": self.model, "voice": self.voice, "input": text,
                "response_format": "pcm"}
        label = self.endpoint.label
        async with request(self.http, self.endpoint, "audio/speech", self.timeouts,
                           json=body) as response:
            if response.content_type.startswith(_TEXTUAL):
                raise SpeechUnavailable(f"answered {response.content_type}, not audio: check "
                                        "that it supports response_format pcm", engine=label)
            odd = b""  # a sample split between two network reads
            with map_exceptions(label):
                async for data in response.content.iter_any():
                    if odd:
                        data = odd + data
                    whole = len(data) & ~1
                    odd = data[whole:]
                    if whole:
                        yield data[:whole]
            # A final lone byte is half a sample: nothing that can be played.


@dataclass(eq=False)
class OpenAIRecogniser:
    """``POST {url}/audio/transcriptions``: the turn as a mono PCM16 WAV, multipart.

    ``http``: the process's pool of speech connections (None: one connection a request).
    """

    endpoint: Endpoint
    _: KW_ONLY
    model: str
    language: str | None = None
    timeouts: SpeechTimeouts = SpeechTimeouts()
    http: SpeechHttp | None = None

    async def transcribe(self, pcm16: bytes, sample_rate: int) -> str:
        """The words of one turn ('' for nothing heard)."""
        pcm16 = whole_samples(pcm16, sample_rate)
        if not pcm16:
            return ""
        form = aiohttp.FormData()
        form.add_field("file", pcm16_wav(pcm16, sample_rate),
                       filename="turn.wav", content_type="audio/wav")
        form.add_field("model", self.model)
        form.add_field("response_format", "json")
        if self.language:
            form.add_field("language", self.language)
        label = self.endpoint.label
        async with request(self.http, self.endpoint, "audio/transcriptions", self.timeouts,
                           data=form) as response:
            with map_exceptions(label):
                body = await response.content.read(_MAX_TRANSCRIPT_BYTES + 1)
            plain = response.content_type == "text/plain"
        if len(body) > _MAX_TRANSCRIPT_BYTES:
            raise SpeechUnavailable("answered a transcript too large to be one turn", engine=label)
        return (body.decode("utf-8", "replace") if plain else _json_text(body, label)).strip()


def _json_text(body: bytes, label: str) -> str:
    """The ``text`` of a JSON transcription (``json`` or ``verbose_json``)."""
    try:
        text = json.loads(body)["text"]
    except (ValueError, KeyError, TypeError):
        raise SpeechUnavailable("answered something that is not {\"text\": ...}",
                                engine=label) from None
    if not isinstance(text, str):
        raise SpeechUnavailable("answered a text that is not a string", engine=label)
    return text
