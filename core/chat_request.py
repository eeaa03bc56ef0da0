"""Reading a chat-completions request: what the service accepts and what it refuses.

Governance rules (spec: public-api.md "Chat completion request"): one completion per
request (``n`` above 1 is refused), no client-supplied tools (an empty list counts as
none), messages with roles system, developer, user, assistant and tool whose content
is a string or a list of parts. Unknown parameters are accepted and, for passthrough,
forwarded untouched: clients send ``stream_options``, ``user``, ``seed``, ``metadata``
and more; ``stream_options.include_usage``, which decides whether a stream's tokens
are counted, must be a boolean (as OpenAI requires). Every refusal names the
parameter, as the OpenAI SDKs expect.
"""

from __future__ import annotations

__all__ = ["ChatRequest", "ChatRequestError", "estimated_prompt_tokens", "read_chat_request",
           "question_of", "text_of"]

from typing import Any, NamedTuple

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
CLIENT_TOOL_FIELDS = ("tools", "functions", "tool_choice", "function_call")
_TOOLS_HINT = (
    "This service does not accept tools from the client: for passthrough they would bypass "
    "its governance, and an agent's tools belong to the agent. Turn off tool use, function "
    "calling or 'agent mode' in your client's settings for this model."
)


class ChatRequestError(ValueError):
    def __init__(self, message: str, param: str | None, code: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code


class ChatRequest(NamedTuple):
    """A request that passed the checks. A named tuple, not a frozen dataclass: one is
    made per request, and a frozen dataclass sets each field through ``object.__setattr__``."""

    body: dict[str, Any]  #: the request as sent, forwarded as-is for passthrough
    model: str
    messages: list[dict[str, Any]]
    stream: bool
    include_usage: bool


def _is_empty(value: Any) -> bool:
    return value is None or value == [] or value == {}


def _check_content(content: Any, index: int, role: str) -> None:
    if isinstance(content, str):
        return  # the usual message: its place is named only when refused
    where = f"messages[{index}].content"
    if content is None:
        if role in ("assistant", "function"):
            return  # an assistant turn that only called tools
        raise ChatRequestError(f"{where} is required.", where)
    if not isinstance(content, list):
        raise ChatRequestError(f"{where} must be a string or a list of parts.", where)
    for part_index, part in enumerate(content):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise ChatRequestError(f"{where}[{part_index}] must be an object with a type.",
                                   f"{where}[{part_index}]")


def _check_messages(messages: Any) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        raise ChatRequestError("messages must be a non-empty array.", "messages")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise ChatRequestError(f"messages[{index}] must be an object.", f"messages[{index}]")
        role = message.get("role")
        if not isinstance(role, str) or role not in ROLES:
            raise ChatRequestError(
                f"messages[{index}].role must be one of system, developer, user, assistant, tool.",
                f"messages[{index}].role")
        _check_content(message.get("content"), index, role)
    return messages


# How many completions a request asks the upstream to make. ``best_of`` is not
# OpenAI's for chat, but servers that honour it (vLLM) generate that many answers and
# report the tokens of the one returned: the rest would go uncounted.
_COMPLETION_COUNTS = ("n", "best_of")


def read_chat_request(body: Any) -> ChatRequest:
    """Check a decoded JSON body; raise :class:`ChatRequestError` naming the parameter."""
    if not isinstance(body, dict):
        raise ChatRequestError("The body must be a JSON object.", None)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ChatRequestError("model is required.", "model")
    messages = _check_messages(body.get("messages"))
    for name in _COMPLETION_COUNTS:
        count = body.get(name)
        if count is not None and (not isinstance(count, int) or isinstance(count, bool)
                                  or count < 1):
            raise ChatRequestError(f"{name} must be a positive integer.", name)
        if count is not None and count > 1:
            raise ChatRequestError(f"Only one completion per request: {name} must be 1.", name)
    for name in CLIENT_TOOL_FIELDS:
        if not _is_empty(body.get(name)) and not (name == "tool_choice" and body[name] == "none"):
            raise ChatRequestError(_TOOLS_HINT, name, "tools_not_allowed")
    stream = body.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise ChatRequestError("stream must be true or false.", "stream")
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise ChatRequestError("stream_options must be an object.", "stream_options")
    if options and not isinstance(options.get("include_usage", False), (bool, type(None))):
        # Forwarded, "false" or "" could read as false to a lenient upstream, which then
        # sends no usage chunk and the stream's tokens go uncounted.
        raise ChatRequestError("stream_options.include_usage must be true or false.",
                               "stream_options.include_usage")
    include_usage = bool(stream and options and options.get("include_usage") is True)
    return ChatRequest(body, model, messages, bool(stream), include_usage)


def text_of(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # A part's text is read only when it is a string: the reader checks parts for a
        # type alone, so {"type": "text", "text": 5} can arrive here.
        return "\n".join(part["text"] for part in content
                         if isinstance(part, dict) and part.get("type") in ("text", "input_text")
                         and isinstance(part.get("text"), str))
    return ""


def estimated_prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """About how many tokens the text of ``messages`` makes, for a call the upstream
    never counted (a stream cut before its usage chunk): four characters a token,
    OpenAI's rule of thumb for English."""
    return -(-sum(len(text_of(message.get("content"))) for message in messages) // 4)


def question_of(messages: list[dict[str, Any]]) -> str:
    """For an agent, the last user message is the question; earlier ones are ignored."""
    for message in reversed(messages):
        if message.get("role") == "user":
            question = text_of(message.get("content")).strip()
            if question:
                return question
    raise ChatRequestError("An agent needs a user message with text.", "messages")
