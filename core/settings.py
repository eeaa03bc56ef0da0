"""Every setting svc knows, declared once, and the pure rules that read and check them.

A setting has one declaration here: its type, default, accepted range, whether it is
stored encrypted, whether it is boot-only, and who may change it at runtime. The app
reads boot values (environment and TOML) and runtime values (the ``setting`` table)
and asks :func:`resolve` for the value in force; :func:`check_runtime_value` decides
whether a write is allowed. Nothing here touches the environment or the database.

Resolution order (spec: telephony.md "Runtime settings"): a runtime value wins, then the
boot value, then the declared default. A setting that ``follows`` another takes that
one's value while its own is null (``voice.phone.*`` follows ``voice.*``;
``telephony.public_base_url`` follows ``server.public_url``). A setting whose default
is ``derived`` works it out from the settings in force instead of declaring it
(``server.public_url`` names where the server listens).
"""

from __future__ import annotations

__all__ = [
    "AREAS",
    "Access",
    "Setting",
    "SettingError",
    "REGISTRY",
    "get",
    "parse_boot_text",
    "check_boot_value",
    "check_runtime_value",
    "default_in_force",
    "resolve",
]

import dataclasses
import enum
from typing import Any, Callable, Mapping

from .egress import parse_allow_hosts
from .forwarded import parse_trusted_proxies
from .host_port import parse_host_port
from .phone_numbers import is_region
from .records import frozen


class Access(enum.Enum):
    """Who may change a setting while the service runs."""

    #: Only at boot (environment or TOML); a restart applies a change.
    BOOT = "boot"
    #: Holders of the ``config.manage`` permission.
    CONFIG = "config.manage"
    #: Holders of the ``voice.manage`` permission.
    VOICE = "voice.manage"
    #: The break-glass super-administrator only.
    SUPERADMIN = "superadmin"


class SettingError(ValueError):
    """A value a setting does not accept; ``code`` and ``key`` go into the 422 body."""

    def __init__(self, key: str, message: str, code: str = "invalid_value") -> None:
        super().__init__(message)
        self.key = key
        self.code = code
        self.message = message


Check = Callable[[Any], str | None]
"""Extra rule for a value: returns a sentence saying what is wrong, or None."""

Derive = Callable[[Callable[[str], Any]], Any]
"""A default worked out from other settings, given a reader of the values in force."""


@frozen
class Setting:
    key: str
    kind: type
    default: Any
    description: str
    access: Access = Access.CONFIG
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] | None = None
    nullable: bool = False
    encrypted: bool = False
    secret: bool = False
    restart: bool = False
    clamp: bool = False
    follows: str | None = None
    check: Check | None = None
    #: the default when none is given, worked out from other settings (``default`` unused)
    derived: Derive | None = None
    #: the part of the service it tunes (a key of :data:`AREAS`); by default the
    #: area its key's first word names
    area: str = ""

    @property
    def runtime(self) -> bool:
        return self.access is not Access.BOOT

    @property
    def hidden(self) -> bool:
        """Values never shown in any response: encrypted credentials and secrets."""
        return self.encrypted or self.secret


def _https_url(value: str) -> str | None:
    if not value.startswith("https://") or len(value) <= len("https://"):
        return "must be an https:// address"
    if any(c.isspace() for c in value):
        return "must not contain spaces"
    return None


def _http_url(value: str) -> str | None:
    if value in ("", "local"):
        return None
    if not value.startswith(("http://", "https://")):
        return "must be empty, 'local' or an http(s):// address"
    return None


def _parsed_by(parse: Callable[[str], Any], problem: str) -> Check:
    """A check that runs the setting's own parser: where it refuses the value (with a
    ValueError naming what is wrong), the check says ``problem`` followed by that."""

    def check(value: str) -> str | None:
        try:
            parse(value)
        except ValueError as exc:
            return f"{problem}{exc}"
        return None

    return check


_listen_address = _parsed_by(parse_host_port, "is not a usable address: ")
# The list parsers name their bad entry.
_allow_hosts = _parsed_by(parse_allow_hosts, "entry ")
_trusted_proxies = _parsed_by(parse_trusted_proxies, "entry ")


#: A server bound to every interface is reached on this machine at its loopback of the
#: same family: a URL cannot name "every interface", and ``[::1]`` answers an IPv6
#: socket even where the system keeps IPv4 off it.
_LOOPBACK_OF_WILDCARD = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}


def _listen_url(value_of: Callable[[str], Any]) -> str:
    """``server.public_url`` when the operator names none: where the server listens, so
    the addresses svc gives out (carrier webhooks, links, the readiness check) carry the
    port it was started on."""
    host = str(value_of("server.host"))
    host = _LOOPBACK_OF_WILDCARD.get(host, host)
    if ":" in host:  # an IPv6 address goes in brackets in a URL
        host = f"[{host}]"
    return f"http://{host}:{value_of('server.port')}"


def _region(value: str) -> str | None:
    if not is_region(value):
        return "must be a region code such as GB or US (ISO 3166-1 alpha-2, upper case)"
    return None


#: The areas the settings are grouped by, in the order an administrator reads them:
#: name -> (title, what the area covers).
AREAS: dict[str, tuple[str, str]] = {
    "features": ("Features", "Switch whole parts of the service on or off."),
    "voice": ("Voice", "How live voice hears a speaker: in the browser (voice.*) and on "
              "telephone calls (voice.phone.*, empty follows the browser value)."),
    "speech": ("Speech engines", "The synthesiser and recogniser that live voice and "
               "telephone calls speak and listen through."),
    "telephony": ("Telephony", "How telephone calls reach the service and are answered."),
    "notifications": ("Notifications", "News of messages and appointments sent to the "
                      "owners' notification targets."),
    "retention": ("Retention", "How long conversations are kept before they are deleted."),
    "limits": ("Limits", "Ceilings that keep one caller or client from taking the whole "
               "service."),
    "network": ("Network and security", "Which addresses the service trusts and may reach."),
    "server": ("Server", "How the process listens and serves; set at boot."),
    "storage": ("Storage", "Where data lives and how credentials are sealed; set at boot."),
}

_AREA_OF_PREFIX = {"server": "server", "features": "features", "voice": "voice",
                   "voice_live": "speech", "telephony": "telephony",
                   "notifications": "notifications", "egress": "network", "api": "limits"}


def _with_area(setting: Setting) -> Setting:
    if setting.area:
        assert setting.area in AREAS, setting.key
        return setting
    area = _AREA_OF_PREFIX.get(setting.key.split(".", 1)[0], "storage")
    return dataclasses.replace(setting, area=area)


def _six_cron_fields(value: str) -> str | None:
    if len(value.split()) != 6:
        return "must be six cron fields: second minute hour day month weekday"
    return None


def _declare(*settings: Setting) -> dict[str, Setting]:
    registry: dict[str, Setting] = {}
    for setting in map(_with_area, settings):
        assert setting.key not in registry, f"declared twice: {setting.key}"
        registry[setting.key] = setting
    for setting in registry.values():
        assert setting.follows is None or setting.follows in registry, setting.key
    return registry


B, C, V, S = Access.BOOT, Access.CONFIG, Access.VOICE, Access.SUPERADMIN
DAYS = 3650  # spec: telephony.md "Limits" — any retention period


def _voice_dials() -> list[Setting]:
    """The speech dials: ``voice.*`` carries the browser defaults, ``voice.phone.*`` the
    telephone ones; a null ``voice.phone.*`` follows ``voice.*`` (spec: "Speech dials")."""
    dials = [
        # name, kind, telephone default, browser default, minimum, maximum, clamp, what it does
        ("silence_threshold_ms", int, 900, 1500, 200, 2000, False,
         "milliseconds of silence that end the speaker's turn"),
        ("min_speech_ms", int, 80, 200, 0, 2000, False,
         "shortest sound, in milliseconds, taken as speech rather than noise"),
        ("turn_detection", bool, True, False, None, None, False,
         "a pause ends the turn only when the turn-detection service agrees"),
        ("speech_rms", float, 0.004, 0.012, 0.0, 1.0, True,
         "loudness (RMS, 0 to 1) above which sound counts as speech"),
        ("barge_rms", float, 0.004, 0.035, 0.0, 1.0, True,
         "loudness (RMS, 0 to 1) at which talking over the agent interrupts it"),
        ("barge_min_ms", int, 100, 320, 100, 2000, False,
         "milliseconds of talking over the agent that interrupt it"),
    ]
    out: list[Setting] = []
    for name, kind, phone, browser, lo, hi, clamp, what in dials:
        out.append(Setting(f"voice.{name}", kind, browser, f"Live voice in the browser: {what}.",
                           C, lo, hi, clamp=clamp))
        out.append(Setting(f"voice.phone.{name}", kind, phone,
                           f"Telephone calls: {what}; empty follows voice.{name}.",
                           C, lo, hi, nullable=True, clamp=clamp, follows=f"voice.{name}"))
    return out


REGISTRY: dict[str, Setting] = _declare(
    # -- process and storage (boot only)
    Setting("server.host", str, "127.0.0.1", "Address the HTTP server listens on.", B),
    Setting("server.port", int, 8080, "Port the HTTP server listens on.", B, 0, 65535),
    Setting("server.public_url", str, None,
            "How the outside world reaches this service; unset, the address it listens on.",
            B, check=_http_url, derived=_listen_url),
    Setting("server.trusted_proxies", str, "",
            "Reverse proxies (addresses or CIDR networks, comma or space separated) whose "
            "Forwarded and X-Forwarded-For/-Proto headers are believed.", B,
            check=_trusted_proxies, area="network"),
    Setting("server.max_body_bytes", int, 1_048_576,
            "Largest request body accepted by JSON endpoints.", B, 1024, 256 * 1_048_576,
            area="limits"),
    # Slow clients (app.http.slow_clients): a connection trickling its request is
    # answered 408 and closed rather than held open.
    Setting("server.header_timeout_seconds", int, 10,
            "Seconds a request's headers may take to arrive.", B, 1, 3600),
    Setting("server.body_timeout_seconds", int, 30,
            "Seconds a request's body may take to arrive after its headers.", B, 1, 3600),
    Setting("server.keep_alive_seconds", int, 5,
            "An idle kept-alive connection is closed after this many seconds.", B, 1, 3600),
    Setting("server.max_connections", int, 1000,
            "Connections and requests served at once; beyond, requests get 503.", B,
            10, 1_000_000, area="limits"),
    # ``svc serve`` runs this many processes on one socket (``app.supervisor``); 0 is
    # one per core.
    Setting("server.workers", int, 0,
            "Worker processes serving HTTP and telephone calls; 0 is one per core.", B,
            0, 256),
    Setting("database.url", str, None,
            "PostgreSQL URL; unset starts the embedded server under storage.data_dir/pg.",
            B, nullable=True, secret=True),
    Setting("storage.data_dir", str, "./data",
            "Directory where the embedded database and uploaded files live.", B),
    Setting("storage.recordings_dir", str, "./data/recordings",
            "Directory where call recordings are written.", B),
    Setting("message_encryption_key", str, None,
            "32-byte key (base64 or hex) sealing credentials at rest; required before any "
            "credential is stored.", B, nullable=True, secret=True),
    Setting("log.level", str, "info", "Least severe kind of event written to the log.", B,
            choices=("debug", "info", "warning", "error"), area="server"),
    # spec: telephony.md "Retention periods" gives the default. Each day's sweep runs
    # once however often this fires (``app.scheduler``).
    Setting("retention.sweep_schedule", str, "0 15 4 * * *",
            "When the daily retention sweep runs, in UTC: second minute hour day month "
            "weekday.", B, check=_six_cron_fields, area="retention"),
    # -- feature flags (spec: runtime overrides under the same names)
    Setting("features.public_api", bool, True,
            "The chat-completions API under /v1 and the management of its keys.", C),
    Setting("features.telephony", bool, False,
            "Telephone lines answered by an agent; an account may have its own value.", C),
    Setting("features.voice", bool, False,
            "Voice input and output; telephone calls need it on. An account may have its "
            "own value.", C),
    Setting("features.voice_live", bool, False,
            "Live two-way voice; telephone calls need it on. An account may have its own "
            "value.", C),
    Setting("notifications.enabled", bool, False,
            "Notifications are sent to the owners' targets; off, nothing leaves.", C),
    Setting("egress.allow_hosts", str, "",
            "Hosts the egress gate lets through although they resolve to loopback, private "
            "or link-local addresses (comma or space separated).", C, check=_allow_hosts),
    # -- public API (spec: public-api.md "Limits"; the three api.* settings: super-admin)
    Setting("api.rate_per_min", int, 60, "Requests one API key may make per minute.", S,
            1, 1_000_000),
    Setting("api.chat_retention_days", int, 0,
            "API conversations are deleted after this many days; 0 keeps them.", S, 0, DAYS,
            area="retention"),
    Setting("api.cors_allow_all", bool, False,
            "Browser pages on other sites may call /v1 (cross-origin requests).", S,
            area="network"),
    # -- telephony (spec: telephony.md "Runtime settings")
    Setting("telephony.provider", str, None,
            "How calls arrive: carrier (a Twilio-compatible carrier), pbx (AudioSocket) or "
            "empty for none.", S, choices=("carrier", "pbx"), nullable=True),
    Setting("telephony.public_base_url", str, None,
            "Public https address the carrier signs; empty follows server.public_url.", S,
            nullable=True, follows="server.public_url", check=_https_url),
    Setting("telephony.max_concurrent_calls", int, 2,
            "Calls answered at once; a call beyond it is turned away.", C, 1, 100_000,
            area="limits"),
    Setting("telephony.pbx_listen", str, None,
            "host:port where the AudioSocket listener accepts the telephone system.", S,
            nullable=True, restart=True, check=_listen_address),
    Setting("telephony.auth_token_enc", str, None,
            "Credential of the carrier account, which signs its requests.", S,
            nullable=True, encrypted=True),
    Setting("telephony.pbx_key_enc", str, None,
            "Shared secret the telephone system sends with every connection.", S,
            nullable=True, encrypted=True),
    Setting("telephony.default_region", str, None,
            "Region (GB, US, ...) whose national and international-prefix numbers are "
            "read as E.164 for lines, transfers and callers; empty takes only + or 00.", S,
            nullable=True, check=_region),
    Setting("telephony.tool_timeout_secs", int, 8,
            "Seconds a tool may take on a call before the caller is told it failed.", C, 1, 60,
            area="limits"),
    # -- speech engines (voice.manage)
    Setting("voice_live.tts_stream", bool, False,
            "A streaming synthesiser is configured for live voice and calls.", V),
    Setting("voice_live.tts_stream_url", str, "",
            "OpenAI-compatible /v1 base for /audio/speech, or 'local' for eSpeak NG.", V,
            check=_http_url),
    Setting("voice_live.tts_model", str, "tts-1", "Model name the synthesiser is asked for.", V),
    Setting("voice_live.tts_voice", str, "alloy", "Voice name the synthesiser speaks with.", V),
    Setting("voice_live.tts_api_key_enc", str, None, "API key sent to the synthesiser.", V,
            nullable=True, encrypted=True),
    Setting("voice_live.stt_url", str, "",
            "OpenAI-compatible /v1 base for /audio/transcriptions, or 'local' for PocketSphinx.",
            V, check=_http_url),
    Setting("voice_live.stt_model", str, "whisper-1",
            "Model name the recogniser is asked for.", V),
    Setting("voice_live.stt_api_key_enc", str, None, "API key sent to the recogniser.", V,
            nullable=True, encrypted=True),
    # spec: telephony.md — "Recognition at 8000 or 16000 Hz; no other rate converts."
    Setting("voice_live.stt_sample_rate", int, 16000,
            "Samples per second of the audio handed to the recogniser.", V,
            choices=(8000, 16000)),
    Setting("voice_live.stt_stream_kind", str, None,
            "Kind of streaming recogniser; not read yet: each turn is recognised whole.", V,
            nullable=True),
    Setting("voice.turn_detection_url", str, "",
            "Turn-detection service: partial transcript in, end-of-turn probability out. "
            "It passes the egress gate: name a local one in egress.allow_hosts.", C,
            check=_http_url, area="speech"),
    *_voice_dials(),
)


def get(key: str) -> Setting:
    try:
        return REGISTRY[key]
    except KeyError:
        raise SettingError(key, f"unknown setting {key!r}", "unknown_setting") from None


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def parse_boot_text(setting: Setting, text: str) -> Any:
    """Turn an environment string into a typed value (``SVC__A__B=...``)."""
    if setting.nullable and text.strip().lower() in ("", "null", "none"):
        return None
    if setting.kind is bool:
        lowered = text.strip().lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        raise SettingError(setting.key, f"{setting.key} must be true or false, not {text!r}")
    if setting.kind in (int, float):
        try:
            return setting.kind(text.strip())
        except ValueError:
            raise SettingError(setting.key, f"{setting.key} must be a number, not {text!r}") from None
    return text


def _check_type(setting: Setting, value: Any) -> Any:
    if value is None:
        if setting.nullable:
            return None
        raise SettingError(setting.key, f"{setting.key} cannot be null")
    kind = setting.kind
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, bool) and kind is not bool:
        raise SettingError(setting.key, f"{setting.key} must be of type {kind.__name__}")
    if not isinstance(value, kind):
        raise SettingError(setting.key, f"{setting.key} must be of type {kind.__name__}")
    return value


def _check_rules(setting: Setting, value: Any) -> None:
    if value is None:
        return
    if setting.minimum is not None and value < setting.minimum:
        raise SettingError(setting.key, f"{setting.key} must be at least {setting.minimum}",
                           "out_of_range")
    if setting.maximum is not None and value > setting.maximum:
        raise SettingError(setting.key, f"{setting.key} must be at most {setting.maximum}",
                           "out_of_range")
    if setting.choices is not None and value not in setting.choices:
        raise SettingError(setting.key,
                           f"{setting.key} must be one of {', '.join(map(str, setting.choices))}")
    if setting.check is not None and (problem := setting.check(value)) is not None:
        raise SettingError(setting.key, f"{setting.key} {problem}")


def check_boot_value(setting: Setting, value: Any) -> Any:
    """A boot value must have the right type; a clamped setting may lie outside its range
    (it is clamped on read), every other range rule holds."""
    value = _check_type(setting, value)
    if not setting.clamp:
        _check_rules(setting, value)
    return value


def check_runtime_value(setting: Setting, value: Any) -> Any:
    """Return the value to store for a runtime write, or raise :class:`SettingError`."""
    if not setting.runtime:
        raise SettingError(setting.key, f"{setting.key} is set at boot only; restart to change it",
                           "boot_only")
    value = _check_type(setting, value)
    _check_rules(setting, value)
    return value


_UNSET = object()


def resolve(key: str, boot: Mapping[str, Any], runtime: Mapping[str, Any]) -> Any:
    """The value in force: runtime wins, then boot, then the default; null follows."""
    setting = get(key)
    value = runtime.get(key, _UNSET) if setting.runtime else _UNSET
    if value is _UNSET:
        value = boot.get(key, _UNSET)
    if value is _UNSET:
        value = default_in_force(key, boot, runtime)
    if value is None and setting.follows is not None:
        return resolve(setting.follows, boot, runtime)
    if setting.clamp and value is not None:
        value = min(max(value, setting.minimum), setting.maximum)
    return value


def default_in_force(key: str, boot: Mapping[str, Any], runtime: Mapping[str, Any]) -> Any:
    """What a setting takes when no value is given: its declared default, or the one
    derived from the settings in force."""
    setting = get(key)
    if setting.derived is None:
        return setting.default
    return setting.derived(lambda other: resolve(other, boot, runtime))
