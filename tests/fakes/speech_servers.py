"""Loopback stand-ins for the speech servers operators run, each on its own wire format.

What belongs here: one aiohttp.web server per real engine, answering the way that
engine does — its paths, the fields it requires, its status codes, content types and
error bodies — so the OpenAI-compatible engines (``adapters/speech/openai.py``) are
tested against what they will meet, not against an idealised server:

* ``FakeOpenAI`` — api.openai.com: a key is required (401 without or with a wrong
  one); ``/audio/speech`` streams ``pcm`` (24 kHz) chunked as
  ``application/octet-stream``; ``/audio/transcriptions`` needs ``file`` and ``model``;
  every error is ``{"error": {"message", "type", "param", "code"}}``.
* ``FakeSpeaches`` — speaches (faster-whisper, formerly faster-whisper-server), a
  FastAPI app: ``/v1/audio/transcriptions`` with ``file`` and ``model`` required (422
  and FastAPI's ``{"detail": [{"loc", "msg", ...}]}`` when missing), a model that is not
  downloaded is 404, audio it cannot decode 415, answers ``json`` / ``text`` /
  ``verbose_json``; a key only when the server was started with one (403 ``{"detail"}``).
* ``FakeKokoro`` — Kokoro-FastAPI: ``/v1/audio/speech`` with models ``kokoro``,
  ``tts-1``, ``tts-1-hd``, ``gpt-4o-mini-tts`` and Kokoro's voice names (OpenAI's names mapped onto them);
  ``stream`` defaults to true: chunked ``audio/pcm`` at 24 kHz (the real server answers
  ``stream: false`` with one body; svc never sends it, so the fake refuses it); errors
  are 400 ``{"detail": {"error", "message", "type"}}``, bad fields 422; no key is
  checked.

The audio is deterministic (``spoken_pcm`` of ``tests/fakes/speech.py``) and goes out in
odd-sized pieces, so a sample is split between two network reads. Each fake records
its requests as ``SpeechRequest`` (multipart files as bytes, a WAV decoded).
"""

from __future__ import annotations

__all__ = ["FakeKokoro", "FakeOpenAI", "FakeSpeaches", "KOKORO_VOICES", "OPENAI_KEY", "kokoro",
           "openai", "speaches"]

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from tests.fakes.loopback import LoopbackServer
from tests.fakes.speech import SpeechRequest, _read_wav, spoken_pcm

#: Kokoro-82M's voices a fake knows (the real list is longer).
KOKORO_VOICES = ("af_heart", "af_bella", "af_nicole", "af_sarah", "af_sky", "am_adam",
                 "am_michael", "bf_emma", "bm_george", "am_v0adam", "af_v0nicole",
                 "bf_v0emma", "af_v0bella", "bf_v0isabella")
#: How Kokoro-FastAPI maps OpenAI's voice names onto its own.
_KOKORO_OPENAI_VOICES = {"alloy": "am_v0adam", "ash": "af_v0nicole", "coral": "bf_v0emma",
                         "echo": "af_v0bella", "fable": "af_sarah", "onyx": "bm_george",
                         "nova": "bf_v0isabella", "sage": "am_michael", "shimmer": "af_sky"}
#: The model names Kokoro-FastAPI takes, all for its one model.
_KOKORO_MODELS = ("kokoro", "tts-1", "tts-1-hd", "gpt-4o-mini-tts")
_OPENAI_VOICES = ("alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx",
                  "sage", "shimmer", "verse")
_FORMATS = ("mp3", "opus", "aac", "flac", "wav", "pcm")
#: The key ``FakeOpenAI`` accepts unless told another.
OPENAI_KEY = "sk-proj-fake-key"


@dataclass
class _SpeechServer(LoopbackServer):
    """What the three fakes share: where they listen, what they heard, how they stream."""

    requests: list[SpeechRequest] = field(default_factory=list)
    #: bytes per streamed write: odd, so samples split across reads
    chunk_bytes: int = 2401
    #: what a transcription says
    transcript: str = " Hello, I would like to book a table."

    def _record(self, request: web.Request, fields: dict[str, Any]) -> None:
        headers = {name.lower(): value for name, value in request.headers.items()}
        self.requests.append(SpeechRequest(request.path, headers, fields,
                                           _read_wav(fields.get("file"))))

    async def _stream_pcm(self, request: web.Request, pcm: bytes, content_type: str,
                          headers: dict[str, str] | None = None) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": content_type, **(headers or {})})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for start in range(0, len(pcm), self.chunk_bytes):
            await response.write(pcm[start:start + self.chunk_bytes])
        await response.write_eof()
        return response


async def _json_body(request: web.Request) -> Any:
    try:
        return json.loads(await request.read())
    except ValueError:
        return None


async def _multipart(request: web.Request) -> dict[str, Any] | None:
    """The form's fields (files as bytes), or None when the body is not multipart."""
    if request.content_type != "multipart/form-data":
        return None
    fields: dict[str, Any] = {}
    async for part in await request.multipart():
        fields[part.name] = bytes(await part.read()) if part.filename else await part.text()
    return fields


# -- OpenAI ----------------------------------------------------------------------------


def _openai_error(status: int, message: str, *, param: str | None = None,
                  code: str | None = None) -> web.Response:
    kind = "invalid_request_error" if status < 500 else "server_error"
    error = {"message": message, "type": kind, "param": param, "code": code}
    return web.json_response({"error": error}, status=status)


@dataclass
class FakeOpenAI(_SpeechServer):
    """api.openai.com's speech endpoints; ``key`` is the only key it accepts."""

    key: str = OPENAI_KEY

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=25 * 1024 * 1024)
        app.router.add_post("/v1/audio/speech", self._speech)
        app.router.add_post("/v1/audio/transcriptions", self._transcriptions)
        return app

    def _refused_key(self, request: web.Request) -> web.Response | None:
        given = request.headers.get("Authorization", "")
        if not given:
            return _openai_error(401, "You didn't provide an API key. You need to provide your "
                                 "API key in an Authorization header using Bearer auth.")
        if given != f"Bearer {self.key}":
            shown = given.removeprefix("Bearer ")[:8]
            return _openai_error(401, f"Incorrect API key provided: {shown}****.",
                                 code="invalid_api_key")
        return None

    async def _speech(self, request: web.Request) -> web.StreamResponse:
        body = await _json_body(request)
        self._record(request, body if isinstance(body, dict) else {})
        if (refused := self._refused_key(request)) is not None:
            return refused
        if not isinstance(body, dict):
            return _openai_error(400, "We could not parse the JSON body of your request.")
        for name in ("model", "input", "voice"):
            if not isinstance(body.get(name), str):
                return _openai_error(400, f"Missing required parameter: '{name}'.", param=name,
                                     code="missing_required_parameter")
        if body["model"] not in ("tts-1", "tts-1-hd", "gpt-4o-mini-tts"):
            return _openai_error(404, f"The model `{body['model']}` does not exist or you do "
                                 "not have access to it.", code="model_not_found")
        if body["voice"] not in _OPENAI_VOICES:
            return _openai_error(400, f"Invalid value for 'voice': '{body['voice']}'.",
                                 param="voice", code="invalid_value")
        if len(body["input"]) > 4096:
            return _openai_error(400, "'input' is too long: at most 4096 characters.",
                                 param="input", code="string_above_max_length")
        if body.get("response_format", "mp3") != "pcm":
            return _openai_error(400, "This fake speaks only response_format pcm.",
                                 param="response_format")
        return await self._stream_pcm(request, spoken_pcm(body["input"]),
                                      "application/octet-stream")

    async def _transcriptions(self, request: web.Request) -> web.Response:
        fields = await _multipart(request)
        self._record(request, fields or {})
        if (refused := self._refused_key(request)) is not None:
            return refused
        if fields is None:
            return _openai_error(400, "Invalid Content-Type header (application/json), "
                                 "expected multipart/form-data.")
        for name in ("file", "model"):
            if name not in fields:
                return _openai_error(400, f"Missing required parameter: '{name}'.", param=name,
                                     code="missing_required_parameter")
        if fields["model"] not in ("whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe"):
            return _openai_error(404, f"The model `{fields['model']}` does not exist or you "
                                 "do not have access to it.", code="model_not_found")
        if self.requests[-1].wav is None:
            return _openai_error(400, "The audio file could not be decoded or its format is "
                                 "not supported.", code="invalid_value")
        if fields.get("response_format", "json") != "json":
            return _openai_error(400, "This fake answers only response_format json.",
                                 param="response_format")
        return web.json_response({"text": self.transcript.strip()})


# -- FastAPI's shapes (speaches, Kokoro-FastAPI) ----------------------------------------


def _detail(status: int, detail: Any) -> web.Response:
    return web.json_response({"detail": detail}, status=status)


def _missing(*where: str) -> web.Response:
    """FastAPI's 422 for a required field that was not sent."""
    return _detail(422, [{"type": "missing", "loc": list(where), "msg": "Field required",
                          "input": None}])


def _not_one_of(where: tuple[str, ...], allowed: tuple[str, ...], given: Any) -> web.Response:
    quoted = [f"'{value}'" for value in allowed]
    words = f"{', '.join(quoted[:-1])} or {quoted[-1]}"  # as pydantic words it
    return _detail(422, [{"type": "literal_error", "loc": list(where),
                          "msg": f"Input should be {words}", "input": given}])


# -- speaches --------------------------------------------------------------------------


@dataclass
class FakeSpeaches(_SpeechServer):
    """speaches serving faster-whisper. ``installed``: the models downloaded (a model
    must be fetched with ``POST /v1/models/{id}`` before use); ``api_key``: None unless
    the server was started with ``API_KEY``."""

    installed: tuple[str, ...] = ("Systran/faster-whisper-small",)
    api_key: str | None = None
    #: answer in this ``response_format`` whatever was asked, as a server that ignores
    #: the field does (None: as asked)
    forced_format: str | None = None

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/audio/transcriptions", self._transcriptions)
        return app

    def _refused_key(self, request: web.Request) -> web.Response | None:
        if self.api_key is None:
            return None
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given:
            return _detail(403, "API key required. Please provide an API key using the "
                           "Authorization header with Bearer scheme.")
        if given != self.api_key:
            return _detail(403, "Invalid API key. The provided API key is incorrect.")
        return None

    async def _transcriptions(self, request: web.Request) -> web.Response:
        fields = await _multipart(request)
        self._record(request, fields or {})
        if (refused := self._refused_key(request)) is not None:
            return refused
        fields = fields or {}
        for name in ("file", "model"):
            if fields.get(name) in (None, ""):  # FastAPI takes an empty form value as none
                return _missing("body", name)
        response_format = self.forced_format or fields.get("response_format", "json")
        formats = ("text", "json", "verbose_json", "srt", "vtt")
        if response_format not in formats:
            return _not_one_of(("body", "response_format"), formats, response_format)
        if fields["model"] not in self.installed:
            return _detail(404, f"Model '{fields['model']}' is not installed locally. You can "
                           "download the model using `POST /v1/models`")
        wav = self.requests[-1].wav
        if wav is None:
            return _detail(415, "Failed to decode audio. The provided file type is not "
                           "supported.")
        return self._transcript(response_format, fields.get("language") or "en",
                                len(wav[3]) / (wav[2] * wav[1]))

    def _transcript(self, response_format: str, language: str, duration: float) -> web.Response:
        text = self.transcript  # segments joined: faster-whisper's start with a space
        if response_format == "text":
            return web.Response(text=text, content_type="text/plain")
        if response_format == "verbose_json":
            segment = {"id": 0, "start": 0.0, "end": duration, "text": text}
            return web.json_response({"task": "transcribe", "language": language,
                                      "duration": duration, "text": text, "words": None,
                                      "segments": [segment]})
        if response_format == "json":
            return web.json_response({"text": text})
        return _detail(400, "This fake does not write subtitles (srt, vtt).")


# -- Kokoro-FastAPI --------------------------------------------------------------------


def _kokoro_error(status: int, error: str, message: str) -> web.Response:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return _detail(status, {"error": error, "message": message, "type": kind})


@dataclass
class FakeKokoro(_SpeechServer):
    """Kokoro-FastAPI's ``/v1/audio/speech`` (it listens on port 8880 by default)."""

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/audio/speech", self._speech)
        return app

    async def _speech(self, request: web.Request) -> web.StreamResponse:
        body = await _json_body(request)
        self._record(request, body if isinstance(body, dict) else {})
        if not isinstance(body, dict):
            return _detail(422, [{"type": "json_invalid", "loc": ["body", 0],
                                  "msg": "JSON decode error", "input": {}}])
        if not isinstance(body.get("input"), str):
            return _missing("body", "input")
        response_format = body.get("response_format", "mp3")
        if response_format not in _FORMATS:
            return _not_one_of(("body", "response_format"), _FORMATS, response_format)
        model = body.get("model", "kokoro")
        if model not in _KOKORO_MODELS:
            return _kokoro_error(400, "invalid_model", f"Unsupported model: {model}")
        voice = str(body.get("voice", "af_heart"))
        for name in voice.replace(" ", "").split("+"):
            if _KOKORO_OPENAI_VOICES.get(name, name) not in KOKORO_VOICES:
                return _kokoro_error(400, "validation_error", f"Voice '{name}' not found. "
                                     f"Available voices: {', '.join(sorted(KOKORO_VOICES))}")
        if response_format != "pcm":
            return _kokoro_error(400, "validation_error", "This fake speaks only pcm.")
        if body.get("stream") is False:
            return _kokoro_error(400, "validation_error", "This fake only streams.")
        headers = {"Content-Disposition": "attachment; filename=speech.pcm",
                   "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return await self._stream_pcm(request, spoken_pcm(body["input"]), "audio/pcm", headers)


# -- as pytest fixtures (import them into a test module) ------------------------------


def _running(server: type[_SpeechServer], name: str):
    """A fixture named ``name`` that runs a ``server`` for one test."""

    @pytest.fixture(name=name)
    async def fixture():
        async with server() as fake:
            yield fake

    return fixture


openai = _running(FakeOpenAI, "openai")  #: accepting ``OPENAI_KEY``
speaches = _running(FakeSpeaches, "speaches")  #: ``Systran/faster-whisper-small`` downloaded
kokoro = _running(FakeKokoro, "kokoro")
