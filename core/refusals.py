"""Whether an incoming call is taken, and if not, the one reason it is refused.

Both transports ask the same question before any audio flows: the carrier's voice
webhook and the pbx answer request. The app gathers the facts (the line, its agent
and account, the speech settings) and the counters (rings, calls, calls at once) and
asks :func:`decide`; it audits the reason it gets as ``telephony.refused``.

The reasons are checked in a fixed order, ``REFUSAL_ORDER``: the spec's table order,
with the three reasons that arise outside the facts placed where they occur —
``public_source`` before anything is looked up, ``lookup_failed`` when the facts
cannot be gathered, ``ticket_unavailable`` after the call was admitted but its
identifier could not be minted. The first reason that applies is the one given, so
a call to a disabled line is ``line_disabled`` whatever else is also wrong, and the
counters are consulted only for a call that every other rule lets through.

spec: telephony.md "Refusal reasons (audited as telephony.refused)" and "Limits".
"""

from __future__ import annotations

__all__ = [
    "REFUSAL_ORDER",
    "SUPPORTED_SAMPLE_RATES",
    "LimitCounts",
    "Limits",
    "LineFacts",
    "RefusalReason",
    "binding_refusal",
    "decide",
    "refusal_before_limits",
    "refusal_by_limits",
    "streaming_synthesiser_configured",
]

import enum

from .records import frozen


class RefusalReason(enum.Enum):
    """Why a call was refused; the value is what the audit trail records."""

    #: A pbx question came from an address outside the operator's network.
    PUBLIC_SOURCE = "public_source"
    #: The database could not be asked; the call fails closed.
    LOOKUP_FAILED = "lookup_failed"
    #: No line on the number rung (or not on this transport).
    UNKNOWN_NUMBER = "unknown_number"
    #: The line exists but is switched off.
    LINE_DISABLED = "line_disabled"
    #: The line's agent is archived or gone.
    AGENT_UNAVAILABLE = "agent_unavailable"
    #: The line's account is gone or deactivated.
    OWNER_UNAVAILABLE = "owner_unavailable"
    #: ``features.voice`` or ``features.voice_live`` is off for the line's account.
    VOICE_NOT_ENABLED = "voice_not_enabled"
    #: No streaming speech synthesiser is configured.
    NO_STREAMING_SYNTHESISER = "no_streaming_synthesiser"
    #: Recognition runs at a rate other than 8000 or 16000 Hz.
    UNSUPPORTED_RATE = "unsupported_rate"
    #: The caller's number rang 5 times in 5 minutes.
    RATE_FROM = "rate_from"
    #: The line took 60 calls in a minute.
    RATE_TO = "rate_to"
    #: ``telephony.max_concurrent_calls`` calls are in progress.
    CONCURRENCY = "concurrency"
    #: The call's identifier could not be minted: the ticket store is unreachable.
    TICKET_UNAVAILABLE = "ticket_unavailable"


#: The order reasons are decided in; the first that applies is given.
REFUSAL_ORDER: tuple[RefusalReason, ...] = tuple(RefusalReason)

# spec: telephony.md "Prerequisites" — "no other rate converts".
SUPPORTED_SAMPLE_RATES = (8000, 16000)


@frozen
class LineFacts:
    """What the service knows about a call before any counter is consulted."""

    line_found: bool
    line_enabled: bool
    agent_callable: bool
    owner_active: bool
    #: ``features.voice`` and ``features.voice_live`` both on for the line's account.
    voice_enabled: bool
    streaming_synthesiser: bool
    sample_rate: int


@frozen
class LimitCounts:
    """Counters read under the admission lock, none of them including this call."""

    #: Rings from the caller's number in the last ``Limits.from_window_seconds``.
    rings_from_caller: int
    #: Calls the line took in the last ``Limits.to_window_seconds``.
    calls_to_line: int
    #: Calls in progress across every line and every server process.
    calls_in_progress: int


@frozen
class Limits:
    """spec: telephony.md "Limits"."""

    max_concurrent_calls: int = 2
    rings_per_caller: int = 5
    from_window_seconds: int = 300
    calls_per_line: int = 60
    to_window_seconds: int = 60


def streaming_synthesiser_configured(tts_stream: bool, tts_stream_url: str | None) -> bool:
    """spec: "Prerequisites" 2 — ``voice_live.tts_stream`` on and its URL set."""
    return bool(tts_stream) and bool((tts_stream_url or "").strip())


def binding_refusal(line_found: bool, line_enabled: bool, agent_callable: bool,
                    owner_active: bool) -> RefusalReason | None:
    """The first reason from the line itself: there, switched on, its agent callable
    and its account active. A conversation in text with a line is held to these as a
    call is; the rest of the rules are about speech and the telephone network."""
    checks = (
        (line_found, RefusalReason.UNKNOWN_NUMBER),
        (line_enabled, RefusalReason.LINE_DISABLED),
        (agent_callable, RefusalReason.AGENT_UNAVAILABLE),
        (owner_active, RefusalReason.OWNER_UNAVAILABLE),
    )
    return next((reason for holds, reason in checks if not holds), None)


def refusal_before_limits(facts: LineFacts) -> RefusalReason | None:
    """The first reason from the line and the settings, or None when they allow it."""
    bound = binding_refusal(facts.line_found, facts.line_enabled, facts.agent_callable,
                            facts.owner_active)
    if bound is not None:
        return bound
    checks = (
        (facts.voice_enabled, RefusalReason.VOICE_NOT_ENABLED),
        (facts.streaming_synthesiser, RefusalReason.NO_STREAMING_SYNTHESISER),
        (facts.sample_rate in SUPPORTED_SAMPLE_RATES, RefusalReason.UNSUPPORTED_RATE),
    )
    for holds, reason in checks:
        if not holds:
            return reason
    return None


def refusal_by_limits(counts: LimitCounts, limits: Limits) -> RefusalReason | None:
    """The first limit this call would exceed, or None.

    "Rang 5 times in 5 minutes" refuses the sixth ring; "60 calls in a minute"
    refuses the sixty-first; the cap refuses a call once that many are in progress.
    """
    if counts.rings_from_caller >= limits.rings_per_caller:
        return RefusalReason.RATE_FROM
    if counts.calls_to_line >= limits.calls_per_line:
        return RefusalReason.RATE_TO
    if counts.calls_in_progress >= limits.max_concurrent_calls:
        return RefusalReason.CONCURRENCY
    return None


def decide(facts: LineFacts, counts: LimitCounts | None = None,
           limits: Limits = Limits()) -> RefusalReason | None:
    """The reason to refuse, or None to take the call.

    Without ``counts`` only the facts are judged (the app reads the counters only
    for a call the facts allow, under its admission lock).
    """
    reason = refusal_before_limits(facts)
    if reason is not None or counts is None:
        return reason
    return refusal_by_limits(counts, limits)
