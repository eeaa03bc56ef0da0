"""The readiness check: eleven questions, in the spec's order, each answered pass or
fail with a sentence a person can act on.

spec: telephony.md "Readiness check" — ``GET /api/admin/telephony/preflight``
(break-glass) and ``GET /api/admin/telephony/check`` (telephony.manage) run the same
checks on request only; ``svc telephony check`` prints them in a terminal.

A check that concerns one transport only (the carrier's credential and public
address; the pbx listen address and secret) passes with "not needed" when no enabled
line and not the named provider uses that transport. ``synthesiser`` is a real
request: a short phrase is sent to the configured engine — ``POST
{voice_live.tts_stream_url}/audio/speech`` (OpenAI-compatible: ``voice_live.tts_model``,
``voice_live.tts_voice``, ``response_format: pcm``, key ``voice_live.tts_api_key_enc``),
passing when audible sound comes back within a few seconds (no audio, or silence only,
fails: a call would end ``notice_failed`` on it); for ``local``, the built-in engine
(eSpeak NG, package ``espeakng-loader``) must speak the phrase the same way.
"""

from __future__ import annotations

import ipaddress
from contextlib import aclosing
from typing import Awaitable, Callable
from urllib.parse import urlsplit

import anyio

from adapters.health_probe import HealthAnswer, probe_health
from adapters.speech import SpeechUnavailable
from adapters.speech.http import Endpoint
from adapters.voice.session import AUDIBLE_RMS
from app import db
from app.crypto import KEY_MISSING_MESSAGE, SecretBox
from app.services.settings import Settings, Snapshot
from app.telephony.settings_resource import effective_public_base, media_url, public_url
from app.telephony.signalling import MEDIA_PATH, VOICE_PATH
from app.telephony.speech_engines import LOCAL, synthesiser_for
from core.process_listeners import ProcessListener, judge_listeners
from core.records import frozen
from core.refusals import SUPPORTED_SAMPLE_RATES, streaming_synthesiser_configured
from kernels.energy import rms

CHECK_IDS = ("feature", "provider", "carrier_credential", "public_address", "listen_address",
             "shared_secret", "message_key", "recognition_rate", "synthesiser", "lines",
             "line_bindings")

#: every serving process and the address it listens on (``app.telephony.process_listeners``)
Listeners = Callable[[], Awaitable[list[ProcessListener]]]
HealthProbe = Callable[[str], Awaitable[HealthAnswer]]

_ENABLED_LINES = """
SELECT l.e164, l.provider,
       a.id IS NOT NULL AND a.archived_at IS NULL AS agent_callable,
       o.id IS NOT NULL AND o.deactivated_at IS NULL AS owner_active
FROM telephony_line l
LEFT JOIN agent a ON a.id = l.agent_id
LEFT JOIN account o ON o.id = l.owner_user_id
WHERE l.enabled
ORDER BY l.e164
"""


@frozen
class CheckResult:
    id: str
    ok: bool
    message: str

    def view(self) -> dict[str, str]:
        return {"id": self.id, "status": "pass" if self.ok else "fail", "message": self.message}


def report(results: list[CheckResult]) -> dict[str, object]:
    return {"ready": all(r.ok for r in results), "checks": [r.view() for r in results]}


def _reachable_host(base: str) -> str | None:
    """Why the carrier cannot reach ``base``, or None when it looks reachable."""
    parts = urlsplit(base)
    if parts.scheme != "https" or not parts.hostname:
        return (f"The public address is {base or 'not set'}; the carrier needs an https "
                "address. Enter it as the public address in the telephone settings "
                "(public_base_url in PUT /api/admin/telephony).")
    host = parts.hostname
    try:
        private = not ipaddress.ip_address(host).is_global
    except ValueError:
        private = host == "localhost" or host.endswith((".localhost", ".local", ".internal"))
    if private:
        return (f"The public address {base} names {host}, which the carrier cannot reach "
                "from the internet. Use the address the internet knows this deployment by.")
    return None


HEALTH_PATH = "/healthz"


def _what_answered(answer: HealthAnswer) -> str:
    """The probe's answer as the rest of a sentence, for anything but svc's 200."""
    if answer.status is None:
        return f"did not answer: {answer.failure}"
    by = f" (Server: {answer.server})" if answer.server else ""
    if answer.from_svc and answer.status == 503:
        return "reached svc, whose database cannot be reached (HTTP 503)"
    if answer.from_svc:
        return f"reached svc, which answered HTTP {answer.status}"
    if answer.status == 200:
        return (f"answered HTTP 200{by}, but not with svc's health answer: the address "
                "leads to another server")
    return f"answered HTTP {answer.status}{by}, not svc's health answer"


def _recogniser_words(engine: str) -> str:
    """The end of the recognition check's sentence: which recogniser calls use.

    The spec asks this check about the rate only, and counts a recogniser that cannot
    be reached as a symptom ("notice then silence"), not a readiness failure; so a
    missing recogniser does not fail the check, but its message says what a call
    will do without one. Nothing is asked of the engine: that needs a caller's speech.
    """
    if not engine:
        return (". No recogniser is set, so a call will understand nothing the caller "
                "says: set voice_live.stt_url to an OpenAI-compatible /v1 base, or to "
                f"'{LOCAL}' for the built-in engine (PocketSphinx).")
    if engine == LOCAL:
        return ", by the built-in engine (PocketSphinx)."
    return (f", by the engine at {Endpoint(engine).label} (set, not tried: trying it takes "
            "a caller's speech).")


# -- the synthesiser

TEST_PHRASE = "This is a test of the telephone line."
TIMEOUT_SECONDS = 5.0


def _unavailable_sentence(exc: SpeechUnavailable, local: bool) -> str:
    if local:
        return f"voice_live.tts_stream_url is local but the {exc}."
    host = exc.engine or "the configured address"
    if exc.status in (401, 403):
        return (f"The speech engine at {host} refused the key (HTTP {exc.status}). "
                "Store a valid voice_live.tts_api_key_enc.")
    if exc.status is not None:
        return (f"The speech engine at {host} {exc.message}. Check voice_live.tts_model "
                "and voice_live.tts_voice.")
    return (f"The speech engine at {host} did not answer: {exc.message}. Check "
            "voice_live.tts_stream_url and that the engine is running.")


async def probe_synthesiser(snapshot: Snapshot, key: str | None) -> tuple[bool, str]:
    """``(passed, sentence)``: the engine a call would use speaks the test phrase.

    The synthesiser comes from ``app.telephony.speech_engines``, as a call's does, so the check
    and the calls agree — ``local`` included, which must really speak.
    """
    url = (snapshot["voice_live.tts_stream_url"] or "").strip()
    if not streaming_synthesiser_configured(snapshot["voice_live.tts_stream"], url):
        return False, ("No streaming synthesiser is configured, so a line picks up and "
                       "cannot speak. Set voice_live.tts_stream to true and "
                       "voice_live.tts_stream_url to an engine or 'local'.")
    synthesiser = synthesiser_for(snapshot, key)
    local = url == LOCAL
    name = "The local speech engine (eSpeak NG)" if local else (
        f"The speech engine at {Endpoint(url).label}")
    heard = _Heard()
    try:
        with anyio.fail_after(TIMEOUT_SECONDS):
            async with aclosing(synthesiser.stream(TEST_PHRASE)) as chunks:
                async for chunk in chunks:
                    if heard.take(chunk):
                        break
    except SpeechUnavailable as exc:
        return False, _unavailable_sentence(exc, local)
    except TimeoutError:
        if not heard.answered:
            return False, (f"{name} did not answer within {TIMEOUT_SECONDS:g} seconds. "
                           "Check voice_live.tts_stream_url and that the engine is running.")
    if not heard.answered:
        return False, f"{name} answered without audio."
    if not heard.sounded:
        # A call would end notice_failed: the opening notice must be heard.
        return False, (f"{name} answered with silence only, so every call would end "
                       "notice_failed. Check voice_live.tts_model and voice_live.tts_voice.")
    return True, f"{name} spoke the test phrase."


class _Heard:
    """What the test phrase brought: any audio, and any sound a caller would hear
    (judged by the call's own rule, ``AUDIBLE_RMS``, over short stretches)."""

    #: bytes judged at a time: 20 ms of 16-bit audio at 16 kHz
    WINDOW = 640

    def __init__(self) -> None:
        self.answered = False
        self.sounded = False
        self._odd = b""  # a sample split between two chunks

    def take(self, chunk: bytes) -> bool:
        """Judge one chunk; True once sound was heard."""
        self.answered = self.answered or bool(chunk)
        pcm = self._odd + chunk
        whole = len(pcm) & ~1
        self._odd = pcm[whole:]
        self.sounded = self.sounded or any(
            rms(pcm[start:min(start + self.WINDOW, whole)]) >= AUDIBLE_RMS
            for start in range(0, whole, self.WINDOW))
        return self.sounded


# -- the checks

class Readiness:
    def __init__(self, settings: Settings, box: SecretBox, listeners: Listeners,
                 health_probe: HealthProbe = probe_health) -> None:
        self.settings = settings
        self.box = box
        self.listeners = listeners
        #: asks the public address's /healthz through the network, as the carrier would
        self.health_probe = health_probe

    async def run(self) -> list[CheckResult]:
        snapshot = await self.settings.snapshot()
        async with db.connection() as connection:
            lines = [dict(row) for row in await connection.fetch(_ENABLED_LINES)]
        in_use = {line["provider"] for line in lines} | {snapshot["telephony.provider"]}
        results = [
            self._feature(snapshot),
            self._provider(snapshot),
            await self._carrier_credential(snapshot, "carrier" in in_use),
            await self._public_address(snapshot, "carrier" in in_use),
            await self._listen_address(snapshot, "pbx" in in_use),
            await self._shared_secret(snapshot, "pbx" in in_use),
            self._message_key(),
            self._recognition_rate(snapshot),
            await self._synthesiser(snapshot),
            self._lines(lines),
            self._line_bindings(lines),
        ]
        assert tuple(r.id for r in results) == CHECK_IDS
        return results

    def _feature(self, snapshot: Snapshot) -> CheckResult:
        if not snapshot["features.telephony"]:
            return CheckResult("feature", False, "features.telephony is off, so the telephone "
                               "paths answer 404. Switch it on in the admin configuration.")
        off = [k for k in ("features.voice", "features.voice_live") if not snapshot[k]]
        if off:
            return CheckResult("feature", False, f"{' and '.join(off)} off: every call is "
                               "refused (voice_not_enabled). Switch them on in the admin "
                               "configuration.")
        return CheckResult("feature", True, "Telephone, voice and live voice are switched on.")

    def _provider(self, snapshot: Snapshot) -> CheckResult:
        provider = snapshot["telephony.provider"]
        if provider is None:
            return CheckResult("provider", False, "No provider is named, so no call can be "
                               "taken. Choose carrier or pbx as the provider in the telephone "
                               "settings (provider in PUT /api/admin/telephony).")
        return CheckResult("provider", True, f"The provider is {provider}.")

    async def _carrier_credential(self, snapshot: Snapshot, needed: bool) -> CheckResult:
        if not needed:
            return CheckResult("carrier_credential", True, "Not needed: nothing uses the carrier.")
        if await self.settings.secret("telephony.auth_token_enc") is not None:
            return CheckResult("carrier_credential", True, "The carrier credential is stored.")
        if snapshot["telephony.auth_token_enc"]:
            return CheckResult("carrier_credential", False, "A carrier credential is stored but "
                               "cannot be read with the current message_encryption_key; store "
                               "it again in the telephone settings (carrier_credential in "
                               "PUT /api/admin/telephony).")
        return CheckResult("carrier_credential", False, "No carrier credential is stored, so "
                           "every carrier call is refused as unsigned. Store the carrier "
                           "account's auth token as the carrier credential in the telephone "
                           "settings (carrier_credential in PUT /api/admin/telephony).")

    async def _public_address(self, snapshot: Snapshot, needed: bool) -> CheckResult:
        if not needed:
            return CheckResult("public_address", True, "Not needed: nothing uses the carrier.")
        problem = _reachable_host(effective_public_base(snapshot))
        if problem:
            return CheckResult("public_address", False, problem)
        health = public_url(snapshot, HEALTH_PATH)
        answer = await self.health_probe(health)
        if answer.status != 200 or not answer.from_svc:
            return CheckResult("public_address", False, f"Asked through the network as the "
                               f"carrier would, {health} {_what_answered(answer)}. Check the "
                               "DNS name, the reverse proxy and its certificate "
                               "(docs/deployment.md).")
        return CheckResult("public_address", True, f"{health} answered through the network. "
                           f"The carrier console must hold {public_url(snapshot, VOICE_PATH)} "
                           f"exactly; audio goes to {media_url(snapshot, MEDIA_PATH)}.")

    async def _listen_address(self, snapshot: Snapshot, needed: bool) -> CheckResult:
        address = snapshot["telephony.pbx_listen"]
        if not needed:
            return CheckResult("listen_address", True, "Not needed: nothing uses the pbx.")
        if not address:
            return CheckResult("listen_address", False, "No listen address is set, so the "
                               "telephone system has nowhere to send audio. Set the listen "
                               "address in the telephone settings (pbx_listen in PUT "
                               "/api/admin/telephony) and restart the deployment.")
        return CheckResult("listen_address", *judge_listeners(address, await self.listeners()))

    async def _shared_secret(self, snapshot: Snapshot, needed: bool) -> CheckResult:
        if not needed:
            return CheckResult("shared_secret", True, "Not needed: nothing uses the pbx.")
        if await self.settings.secret("telephony.pbx_key_enc") is not None:
            return CheckResult("shared_secret", True, "The shared secret is stored; the "
                               "telephone system sends it in x-service-telephony-key.")
        return CheckResult("shared_secret", False, "No readable shared secret is stored, so "
                           "every request of the telephone system is refused. Store one in "
                           "the telephone settings (shared_secret in PUT "
                           "/api/admin/telephony) and put the same value in the dialplan.")

    def _message_key(self) -> CheckResult:
        if self.box.can_seal:
            return CheckResult("message_key", True, "message_encryption_key is set; "
                               "credentials can be stored.")
        return CheckResult("message_key", False, KEY_MISSING_MESSAGE)

    def _recognition_rate(self, snapshot: Snapshot) -> CheckResult:
        rate = snapshot["voice_live.stt_sample_rate"]
        engine = _recogniser_words((snapshot["voice_live.stt_url"] or "").strip())
        if rate in SUPPORTED_SAMPLE_RATES:
            return CheckResult("recognition_rate", True, f"Recognition runs at {rate} Hz{engine}")
        return CheckResult("recognition_rate", False, f"Recognition would run at {rate} Hz"
                           f"{engine} But only 8000 and 16000 convert: set "
                           "voice_live.stt_sample_rate to one of them.")

    async def _synthesiser(self, snapshot: Snapshot) -> CheckResult:
        key = await self.settings.secret("voice_live.tts_api_key_enc")
        ok, message = await probe_synthesiser(snapshot, key)
        return CheckResult("synthesiser", ok, message)

    def _lines(self, lines: list[dict]) -> CheckResult:
        if not lines:
            return CheckResult("lines", False, "No line is registered and enabled, so nothing "
                               "answers. Register a number and enable it.")
        return CheckResult("lines", True, f"{len(lines)} line(s) enabled.")

    def _line_bindings(self, lines: list[dict]) -> CheckResult:
        broken = [line["e164"] for line in lines
                  if not (line["agent_callable"] and line["owner_active"])]
        if broken:
            return CheckResult("line_bindings", False, f"{', '.join(broken)}: the agent is "
                               "archived or gone, or the account is gone or deactivated, so "
                               "the line refuses calls. Bind it to a callable agent and an "
                               "active account.")
        return CheckResult("line_bindings", True, "Every enabled line has a callable agent "
                           "and an active account.")
