"""Tools as the pipeline sees them: definitions, the policy hook, and what the model is told.

What belongs here, all pure: ``ToolSpec`` (name, description, JSON-schema parameters,
``side_effecting``, ``usable_on_call``); the ``ToolPolicy`` hook with the two policies
the service uses (``AppToolPolicy`` in chats and the API, ``CallToolPolicy`` on a
telephone call); checking a parameters schema and a call's arguments; and turning a
tool's result, refusal, time-out or failure into the text the model reads next.
Running a tool is I/O and lives in ``app.services.tools``.

spec: telephony.md "Tools on a call" — nothing waits for approval on a call; a
side-effecting tool not marked usable on a call is refused with text the agent can
say, telling it to offer to take a message; reading tools are unaffected; past the
time ceiling the caller is told the same as for a refusal and the call goes on.
"""

from __future__ import annotations

__all__ = [
    "AppToolPolicy",
    "CallToolPolicy",
    "MAX_RESULT_CHARS",
    "TOOL_NAME",
    "ToolFailed",
    "ToolPolicy",
    "ToolSpec",
    "check_arguments",
    "check_parameters_schema",
    "failure_text",
    "parse_arguments",
    "result_text",
]

import json
import re
from dataclasses import field
from typing import Any, Protocol

from ..records import frozen

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # OpenAI's rule for function names
MAX_RESULT_CHARS = 8000  # a tool result the model reads; more only costs tokens
_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


@frozen
class ToolSpec:
    """A tool an agent may be given. ``parameters`` is a JSON-schema object."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object",
                                                                  "properties": {}})
    #: it changes something outside (books, sends, transfers); reading tools do not
    side_effecting: bool = False
    #: an administrator marked it safe to run during a telephone call
    usable_on_call: bool = False

    def openai_spec(self) -> dict[str, Any]:
        """The tool as a chat-completions ``tools`` entry."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}}


class ToolFailed(Exception):
    """Raised by a tool's handler; its message is told to the model as the reason."""


class ToolPolicy(Protocol):
    """Decides, per caller, whether a tool may run and how long it may take."""

    #: the ceiling of one tool call, in seconds
    timeout_seconds: float

    def check(self, tool: ToolSpec) -> str | None:
        """None to allow ``tool``; otherwise the text the model is told instead."""

    def timeout_text(self, tool: ToolSpec) -> str:
        """What the model is told when ``tool`` ran past ``timeout_seconds``."""


@frozen
class AppToolPolicy:
    """Chats and the public API: every tool the agent has may run."""

    timeout_seconds: float = 30.0

    def check(self, tool: ToolSpec) -> str | None:
        return None

    def timeout_text(self, tool: ToolSpec) -> str:
        return (f"The tool {tool.name} did not answer within {self.timeout_seconds:g} seconds "
                "and was stopped. Tell the user it is not available right now.")


@frozen
class CallToolPolicy:
    """A telephone call: unmarked side-effecting tools are refused with sayable text."""

    timeout_seconds: float = 8.0  # telephony.tool_timeout_secs

    def check(self, tool: ToolSpec) -> str | None:
        if tool.side_effecting and not tool.usable_on_call:
            return self.refusal_text(tool)
        return None

    def refusal_text(self, tool: ToolSpec) -> str:
        return (f"The tool {tool.name} cannot be used during a telephone call. Tell the "
                "caller, in one short sentence, that you cannot do that on this call, and "
                "offer to take a message instead.")

    def timeout_text(self, tool: ToolSpec) -> str:
        # spec: past the ceiling the caller is told the same as for a refusal.
        return self.refusal_text(tool)


def check_parameters_schema(schema: Any) -> str | None:
    """None when ``schema`` is a usable JSON-schema object for tool arguments, else
    what is wrong with it (for a 422)."""
    if not isinstance(schema, dict):
        return "parameters must be a JSON object (a JSON schema)."
    if schema.get("type") != "object":
        return 'parameters must be a JSON schema with "type": "object".'
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return "parameters.properties must be an object."
    for name, prop in properties.items():
        if not isinstance(prop, dict):
            return f"parameters.properties.{name} must be an object."
        kind = prop.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if kind is not None and not all(k in _JSON_TYPES for k in kinds):
            return f"parameters.properties.{name}.type is not a JSON-schema type."
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return "parameters.required must be a list of property names."
    missing = [r for r in required if r not in properties]
    if missing:
        return f"parameters.required names {missing[0]!r}, which is not in properties."
    return None


def parse_arguments(text: str) -> dict[str, Any] | str:
    """The model's arguments as an object, or the text telling it they were unusable."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return "The arguments were not valid JSON. Call the tool again with a JSON object."
    if not isinstance(value, dict):
        return "The arguments must be a JSON object. Call the tool again with one."
    return value


def check_arguments(tool: ToolSpec, arguments: dict[str, Any]) -> str | None:
    """None when the required arguments are present, else what the model is told."""
    required = tool.parameters.get("required", [])
    missing = [name for name in required if name not in arguments]
    if missing:
        return (f"The tool {tool.name} needs the argument(s) {', '.join(missing)}. Ask the "
                "user for them if you do not know them.")
    return None


def result_text(value: Any) -> str | None:
    """A tool's return value as the text the model reads, or None when it is not
    something a model can read (bytes that are not UTF-8, objects JSON cannot hold)."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(value, str):
        try:
            value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            return None
    if "\x00" in value:
        return None
    if len(value) > MAX_RESULT_CHARS:
        value = value[:MAX_RESULT_CHARS] + " …(truncated)"
    return value


def failure_text(tool_name: str, reason: str) -> str:
    """What the model is told when a tool failed; the conversation goes on."""
    return (f"The tool {tool_name} failed: {reason}. Do not retry it now; tell the user "
            "it did not work and carry on.")
