"""Generation parameters of a chat-completions request, read once and checked.

What belongs here: the parameters an agent call hands on to the agent's model —
``max_tokens`` (or ``max_completion_tokens``), ``stop``, ``temperature``, ``top_p``,
``seed``, ``presence_penalty``, ``frequency_penalty``, ``user`` and
``response_format`` — their ranges as OpenAI documents them, and how the built-in
``local`` model honours them: it cuts its answer at a stop sequence or after
``max_tokens`` words (its tokens are words), and it has no sampling, so it takes
only the values that mean "no sampling" (``temperature`` 0, ``top_p`` 1, penalties
0; any ``seed``). What it cannot honour, ``response_format`` above all, is refused
by name rather than dropped.
"""

from __future__ import annotations

__all__ = ["GenerationError", "GenerationOptions", "cut_answer", "local_refusal",
           "read_generation_options"]

import math
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from core.chat_request import ChatRequestError
from core.records import frozen

#: (name, lowest, highest) of the numeric sampling parameters, as OpenAI bounds them.
_RANGES = (("temperature", 0.0, 2.0), ("top_p", 0.0, 1.0),
           ("presence_penalty", -2.0, 2.0), ("frequency_penalty", -2.0, 2.0))
#: what a model without sampling can be asked for: the values that mean "none".
_NO_SAMPLING = {"temperature": 0.0, "top_p": 1.0, "presence_penalty": 0.0,
                "frequency_penalty": 0.0}
_MAX_STOP = 4
_FORMATS = ("text", "json_object", "json_schema")


#: A parameter is malformed or cannot be honoured; ``param`` names it.
GenerationError = ChatRequestError


@frozen
class GenerationOptions:
    """The parameters a request gave, checked. ``forwarded`` is what the agent's
    upstream model is sent, under the names the request used."""

    forwarded: Mapping[str, Any] = field(default_factory=dict)
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    #: ``json_object`` or ``json_schema`` when the answer must be JSON; None for text
    json_format: str | None = None

    @property
    def wants_json(self) -> bool:
        return self.json_format is not None


def _number(body: Mapping[str, Any], name: str, low: float, high: float) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        raise GenerationError(f"{name} must be a number from {low:g} to {high:g}.", name)
    return float(value)


def _positive_int(body: Mapping[str, Any], name: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GenerationError(f"{name} must be a positive integer.", name)
    return value


def _stop(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    stops = [value] if isinstance(value, str) else value
    if not isinstance(stops, list) or len(stops) > _MAX_STOP or not all(
            isinstance(s, str) and s for s in stops):
        raise GenerationError(f"stop must be a non-empty string or a list of up to {_MAX_STOP} "
                              "of them.", "stop")
    return tuple(stops)


def _json_format(value: Any) -> str | None:
    if value is None:
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind not in _FORMATS:
        raise GenerationError("response_format must be an object whose type is text, "
                              "json_object or json_schema.", "response_format")
    if kind == "json_schema":
        schema = value.get("json_schema")
        if not isinstance(schema, dict) or not isinstance(schema.get("name"), str) \
                or not isinstance(schema.get("schema", {}), dict):
            raise GenerationError("response_format.json_schema must be an object with a name "
                                  "and a schema.", "response_format")
    return None if kind == "text" else kind


_FORWARDED = ("max_tokens", "max_completion_tokens", "stop", "temperature", "top_p", "seed",
              "presence_penalty", "frequency_penalty", "user", "response_format")


def read_generation_options(body: Mapping[str, Any]) -> GenerationOptions:
    """Check the generation parameters of ``body``; raise ``GenerationError`` naming
    the first one that is malformed."""
    for name, low, high in _RANGES:
        _number(body, name, low, high)
    max_tokens = _positive_int(body, "max_tokens")
    max_completion = _positive_int(body, "max_completion_tokens")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise GenerationError("seed must be an integer.", "seed")
    user = body.get("user")
    if user is not None and not isinstance(user, str):
        raise GenerationError("user must be a string.", "user")
    stop = _stop(body.get("stop"))
    json_format = _json_format(body.get("response_format"))
    limits = [n for n in (max_tokens, max_completion) if n is not None]
    forwarded = {name: body[name] for name in _FORWARDED if body.get(name) is not None}
    return GenerationOptions(forwarded, min(limits) if limits else None, stop, json_format)


def local_refusal(options: GenerationOptions) -> GenerationError | None:
    """Why the ``local`` model cannot take ``options``, or None when it can."""
    if options.wants_json:
        return GenerationError(
            "response_format asks for a JSON answer, which the built-in local model cannot "
            "write: it answers in sentences taken from the documents. Leave response_format "
            "out, or use an agent whose model is a provider model that supports it.",
            "response_format", "unsupported_parameter")
    for name, value in _NO_SAMPLING.items():
        given = options.forwarded.get(name)
        if given is not None and float(given) != value:
            return GenerationError(
                f"The built-in local model does not sample: it always gives its one best "
                f"answer, so {name} can only be {value:g}. Leave {name} out, or use a "
                f"provider model.", name, "unsupported_value")
    return None


def _cut_at_stop(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    positions = [i for i in (text.find(s) for s in stops) if i >= 0]
    return (text[:min(positions)], True) if positions else (text, False)


def _first_words(text: str, count: int) -> tuple[str, bool]:
    """The text up to the end of its ``count``-th word, and whether anything was cut."""
    seen, inside = 0, False
    for index, char in enumerate(text):
        if char.isspace():
            if inside and seen == count:
                return text[:index], bool(text[index:].strip())
            inside = False
        elif not inside:
            inside, seen = True, seen + 1
    return text, False


def cut_answer(text: str, options: GenerationOptions) -> tuple[str, str]:
    """A whole answer as the ``local`` model gives it under ``options``: cut at the first
    stop sequence (which is left out, as OpenAI does), then after ``max_tokens``
    words; with the finish reason, ``length`` when the limit cut it."""
    text, _ = _cut_at_stop(text, options.stop)
    if options.max_tokens is not None:
        text, cut = _first_words(text, options.max_tokens)
        if cut:
            return text, "length"
    return text, "stop"
