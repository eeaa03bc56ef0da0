"""One model reply assembled from stream chunks, and the step budget of a run.

What belongs here: ``ReplyAssembler`` reads the chat-completions chunk dicts of one
model call — text deltas, tool-call deltas whose arguments arrive in pieces, the
finish reason and usage — and ``StepBudget`` counts model calls so a model that keeps
asking for tools cannot loop: the last allowed call is made with ``tool_choice:
"none"``, and a reply that still asks for tools ends the run with ``tool_limit``.
"""

from __future__ import annotations

__all__ = ["STEP_LIMIT_TEXT", "ReplyAssembler", "RequestedCall", "StepBudget"]

import json
from typing import Any

from core.errors import LocalProtocolError
from core.records import frozen

#: Said when the budget ran out before the model answered in words.
STEP_LIMIT_TEXT = "I could not finish that request; please try asking in another way."


@frozen
class RequestedCall:
    """A tool call the model asked for; ``arguments`` is its JSON text, unparsed."""

    id: str
    name: str
    arguments: str

    def as_message_entry(self) -> dict[str, Any]:
        """The call as it appears in the assistant message sent back to the model."""
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}


class _PartialCall:
    __slots__ = ("id", "name", "arguments")

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.arguments: list[str] = []


class ReplyAssembler:
    """Feed it each chunk of one streamed reply; read the text, calls and usage after.

    OpenAI and vLLM send a call's id and name in its first delta and the arguments in
    later pieces, all under the same ``index``; Ollama sends each call whole. Both
    assemble the same way. A call without an id gets one made from its position.
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self.finish_reason: str | None = None
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.chunks = 0  #: chunks fed
        self.counted = False  #: a usage object arrived

    def feed(self, chunk: dict[str, Any]) -> str:
        """Account for ``chunk``; return its text delta ("" when it has none)."""
        self.chunks += 1
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.counted = True
            self.prompt_tokens = _int(usage.get("prompt_tokens"))
            self.completion_tokens = _int(usage.get("completion_tokens"))
        text = ""
        for choice in _list(chunk.get("choices")):
            if not isinstance(choice, dict):
                continue
            if isinstance(choice.get("finish_reason"), str):
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or choice.get("message") or {}
            if isinstance(delta, dict):
                text += self._take_delta(delta)
        if text:
            self._text.append(text)
        return text

    def _take_delta(self, delta: dict[str, Any]) -> str:
        for position, entry in enumerate(_list(delta.get("tool_calls"))):
            if isinstance(entry, dict):
                self._take_call(position, entry)
        content = delta.get("content")
        return content if isinstance(content, str) else ""

    def _take_call(self, position: int, entry: dict[str, Any]) -> None:
        index = entry.get("index", position)
        call = self._calls.setdefault(index if isinstance(index, int) else position,
                                      _PartialCall())
        if isinstance(entry.get("id"), str) and entry["id"]:
            call.id = entry["id"]
        function = entry.get("function")
        function = function if isinstance(function, dict) else {}
        if isinstance(function.get("name"), str):
            call.name += function["name"]
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call.arguments.append(arguments)
        elif isinstance(arguments, dict):  # some servers send the object itself
            call.arguments.append(json.dumps(arguments))

    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def tool_calls(self) -> list[RequestedCall]:
        """The complete calls, in index order (a call without a name is dropped)."""
        calls = []
        for index in sorted(self._calls):
            partial = self._calls[index]
            if partial.name:
                calls.append(RequestedCall(partial.id or f"call_{index}", partial.name,
                                           "".join(partial.arguments)))
        return calls


def _list(value: Any) -> list[Any]:
    """``value`` when it is a list; a peer's malformed chunk counts as empty."""
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


class StepBudget:
    """How many model calls one run may make, and how many tools per reply.

    ``start_step()`` before each model call returns the ``tool_choice`` to send:
    ``"auto"`` while tools may still follow, ``"none"`` on the last call.
    """

    def __init__(self, max_steps: int = 4, max_calls_per_step: int = 8) -> None:
        if max_steps < 1 or max_calls_per_step < 1:
            raise ValueError("a run needs at least one step and one call per step")
        self.max_steps = max_steps
        self.max_calls_per_step = max_calls_per_step
        self.steps_taken = 0

    @property
    def exhausted(self) -> bool:
        return self.steps_taken >= self.max_steps

    def start_step(self) -> str:
        if self.exhausted:
            raise LocalProtocolError(f"no model call left of {self.max_steps}")
        self.steps_taken += 1
        return "none" if self.exhausted else "auto"

    def split_calls(self, calls: list[RequestedCall]) -> tuple[list[RequestedCall],
                                                              list[RequestedCall]]:
        """The calls to run now, and those over the per-reply limit (told 'skipped')."""
        return calls[: self.max_calls_per_step], calls[self.max_calls_per_step:]
