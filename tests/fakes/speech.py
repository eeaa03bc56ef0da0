"""A loopback OpenAI-compatible speech server (and turn detector) for tests.

What belongs here: an aiohttp.web server on 127.0.0.1 answering the way OpenAI and the
self-hosted servers that copy it do —

* ``POST /v1/audio/speech`` (JSON: model, voice, input, response_format) streams raw
  PCM16 at 24 kHz with chunked transfer encoding when ``response_format`` is ``pcm``;
* ``POST /v1/audio/transcriptions`` (multipart/form-data: ``file``, ``model``, optional
  ``language`` and ``response_format``) answers ``{"text": ...}``, and 400 with an
  OpenAI error body when the file is missing or is not audio it can read;
* ``POST /turn`` (our own turn-detection protocol, ``adapters/speech/turns.py``)
  answers ``{"probability": ...}``;

and that a test can make misbehave: an error status, a slow first byte or slow chunks,
a connection cut or stalled mid-stream, a body that is not the protocol. It records
every request (the WAV of a transcription decoded) and counts open connections.

The audio it speaks is deterministic: ``MS_PER_CHARACTER`` of a 440 Hz tone per
character of input, so a test can check lengths. The transcript is ``behaviour.text``.

As a process (for the simulator and benchmarks): ``python -m tests.fakes.speech
--port 8098``; it prints ``listening on <port>`` once ready.
"""

from __future__ import annotations

__all__ = ["MS_PER_CHARACTER", "FakeSpeech", "SpeechBehaviour", "SpeechRequest", "speech",
           "speech_http", "spoken_pcm"]

import argparse
import asyncio
import io
import json
import math
import struct
import wave
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from adapters.speech.http import SpeechHttp
from core.records import frozen
from tests.fakes.loopback import LoopbackServer, serve_as_process
from tests.fakes.upstream import _error_response
from tests.support.entered import entered

PCM_RATE = 24000
MS_PER_CHARACTER = 60


def spoken_pcm(text: str) -> bytes:
    """The PCM16 the fake speaks for ``text``: a 440 Hz tone, 60 ms per character."""
    samples = len(text) * PCM_RATE * MS_PER_CHARACTER // 1000
    return struct.pack(f"<{samples}h", *(
        round(8000 * math.sin(2 * math.pi * 440 * n / PCM_RATE)) for n in range(samples)))


@dataclass
class SpeechBehaviour:
    """How the fake answers the next requests; tests replace it as they need."""

    text: str = "hello from the fake recogniser"  #: what every transcription says
    probability: float | str = 0.9  #: the turn detector's answer (a str: sent as is)
    status: int = 200  #: a value >= 400 answers an OpenAI error body instead
    error_message: str = "The fake speech server refused the request."
    first_byte_delay: float = 0.0  #: seconds before the status line is sent
    chunk_bytes: int = 4801  #: PCM per streamed chunk: odd, so samples split across reads
    chunk_delay: float = 0.0  #: seconds between streamed chunks
    #: speech: after this many chunks, "drop" (cut the connection) or "stall" (stay open
    #: and send nothing more)
    interrupt_after: int | None = None
    interrupt: str = "drop"
    garbage: bytes | None = None  #: answer 200 with this body instead of the real one
    garbage_content_type: str = "application/json"


@frozen
class SpeechRequest:
    """One request as the fake received it (header names in lower case). ``fields``:
    the JSON body, or the multipart fields with ``file`` as its bytes; ``wav``: for a
    transcription, (channels, sample width, rate, PCM frames) of the uploaded file."""

    path: str
    headers: dict[str, str]
    fields: dict[str, Any]
    wav: tuple[int, int, int, bytes] | None = None


@dataclass
class FakeSpeech(LoopbackServer):
    """The server; an async context manager that starts and stops it."""

    behaviour: SpeechBehaviour = field(default_factory=SpeechBehaviour)
    requests: list[SpeechRequest] = field(default_factory=list)

    @property
    def turn_url(self) -> str:
        return f"http://{self.host}:{self.port}/turn"

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/v1/audio/speech", self._speech)
        app.router.add_post("/v1/audio/transcriptions", self._transcriptions)
        app.router.add_post("/turn", self._turn)
        return app

    # -- handlers ---------------------------------------------------------------

    def _headers(self, request: web.Request) -> dict[str, str]:
        return {name.lower(): value for name, value in request.headers.items()}

    async def _refusal(self) -> web.Response | None:
        """The misbehaviour every endpoint shares, or None to answer properly."""
        behaviour = self.behaviour
        if behaviour.first_byte_delay:
            await asyncio.sleep(behaviour.first_byte_delay)
        if behaviour.status >= 400:
            return _error_response(behaviour.status, behaviour.error_message)
        if behaviour.garbage is not None:
            return web.Response(body=behaviour.garbage,
                                content_type=behaviour.garbage_content_type)
        return None

    async def _speech(self, request: web.Request) -> web.StreamResponse:
        try:
            body = json.loads(await request.read())
        except ValueError:
            return _error_response(400, "The body is not JSON.")
        self.requests.append(SpeechRequest(request.path, self._headers(request), body))
        refusal = await self._refusal()
        if refusal is not None:
            return refusal
        if not isinstance(body.get("input"), str) or not body.get("model") or not body.get("voice"):
            return _error_response(400, "model, voice and input are required.")
        if body.get("response_format") != "pcm":
            return _error_response(400, "This fake speaks only response_format pcm.")
        return await self._stream(request, spoken_pcm(body["input"]))

    async def _stream(self, request: web.Request, pcm: bytes) -> web.StreamResponse:
        behaviour = self.behaviour
        response = web.StreamResponse(headers={"Content-Type": "audio/pcm"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        size = max(1, behaviour.chunk_bytes)
        for count, start in enumerate(range(0, len(pcm), size)):
            if count == behaviour.interrupt_after:
                if behaviour.interrupt == "stall":
                    await asyncio.Event().wait()  # until the client goes away
                assert request.transport is not None
                request.transport.abort()  # no chunked terminator: a cut, not an end
                raise asyncio.CancelledError
            if count and behaviour.chunk_delay:
                await asyncio.sleep(behaviour.chunk_delay)
            await response.write(pcm[start:start + size])
        await response.write_eof()
        return response

    async def _transcriptions(self, request: web.Request) -> web.Response:
        fields: dict[str, Any] = {}
        if request.content_type != "multipart/form-data":
            return _error_response(400, "Expected multipart/form-data.")
        reader = await request.multipart()
        async for part in reader:
            fields[part.name] = bytes(await part.read()) if part.filename else await part.text()
        wav = _read_wav(fields.get("file"))
        self.requests.append(SpeechRequest(request.path, self._headers(request), fields, wav))
        refusal = await self._refusal()
        if refusal is not None:
            return refusal
        if "file" not in fields or "model" not in fields:
            return _error_response(400, "file and model are required.")
        if wav is None:
            return _error_response(400, "The file is not audio this server can read.")
        return web.json_response({"text": self.behaviour.text})

    async def _turn(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        self.requests.append(SpeechRequest(request.path, self._headers(request), body))
        refusal = await self._refusal()
        if refusal is not None:
            return refusal
        probability = self.behaviour.probability
        if isinstance(probability, str):
            return web.Response(text=probability, content_type="application/json")
        return web.json_response({"probability": probability})


def _read_wav(data: Any) -> tuple[int, int, int, bytes] | None:
    if not isinstance(data, bytes):
        return None
    try:
        with wave.open(io.BytesIO(data)) as wav:
            frames = wav.readframes(wav.getnframes())
            return wav.getnchannels(), wav.getsampwidth(), wav.getframerate(), frames
    except (wave.Error, EOFError):
        return None


# -- as pytest fixtures (import them into a test module) ------------------------------


speech = entered(FakeSpeech, "A running ``FakeSpeech``.")
speech_http = entered(SpeechHttp, "A ``SpeechHttp`` pool, closed after the test.")


# -- as a process ---------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description="Loopback OpenAI-compatible speech server.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default="hello from the fake recogniser")
    args = parser.parse_args()
    serve_as_process(FakeSpeech(behaviour=SpeechBehaviour(text=args.text), port=args.port))


if __name__ == "__main__":
    main()
