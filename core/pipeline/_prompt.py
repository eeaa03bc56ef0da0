"""Building the chat-completions messages of an agent's turn.

What belongs here: the system message (the agent's instructions, the retrieved
passages numbered ``[1]``..``[n]`` and the rule to cite them as ``[n]``), the part of
the stored conversation that is sent again, the question, and the messages that carry
tool calls and their results back to the model. The numbering here is the one
``_citations.map_citations`` reads back.
"""

from __future__ import annotations

__all__ = [
    "CITATION_RULE",
    "JSON_CITATION_RULE",
    "DEFAULT_INSTRUCTIONS",
    "HISTORY_CHARS",
    "HISTORY_MESSAGES",
    "assistant_tool_message",
    "build_messages",
    "history_window",
    "tool_result_message",
]

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from core.passages import Passage
from core.pipeline._steps import RequestedCall

DEFAULT_INSTRUCTIONS = "You are a helpful assistant. Answer briefly and plainly."
CITATION_RULE = (
    "Answer from the numbered passages below when they hold the answer. After each "
    "sentence that uses a passage, cite it by its number in square brackets, like [1] "
    "or [2][3]. Cite only numbers that appear below. If the passages do not hold the "
    "answer, say that you could not find it in the documents rather than guess."
)
#: the rule instead when the answer must be JSON: markers would corrupt it, so the
#: passages are cited beside the answer (``annotations``), never inside it.
JSON_CITATION_RULE = (
    "Answer from the numbered passages below when they hold the answer. Do not write "
    "passage numbers or citation markers anywhere in your answer; answer only with the "
    "JSON asked for."
)
#: the conversation sent back to the model: the last messages, within a size
HISTORY_MESSAGES = 20
HISTORY_CHARS = 24_000
_PASSAGE_CHARS = 2_000  # one passage in the prompt; retrieval's chunks are smaller


def _system_text(instructions: str, passages: Sequence[Passage], json_answer: bool) -> str:
    parts = [instructions.strip() or DEFAULT_INSTRUCTIONS]
    if passages:
        parts.append(JSON_CITATION_RULE if json_answer else CITATION_RULE)
        numbered = [f"[{n}] ({p.document_title}) {p.text.strip()[:_PASSAGE_CHARS]}"
                    for n, p in enumerate(passages, start=1)]
        parts.append("Passages:\n" + "\n\n".join(numbered))
    return "\n\n".join(parts)


def history_window(history: Iterable[Mapping[str, Any]], *, max_messages: int = HISTORY_MESSAGES,
                   max_chars: int = HISTORY_CHARS) -> list[dict[str, str]]:
    """The newest user and assistant messages that fit, oldest first.

    Only plain text turns are resent: the tool traffic of earlier turns served its
    answer already, and its results may be stale.
    """
    kept: list[dict[str, str]] = []
    size = 0
    for message in reversed(list(history)):
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant") or not isinstance(content, str) or not content:
            continue
        size += len(content)
        if len(kept) >= max_messages or size > max_chars:
            break
        kept.append({"role": role, "content": content})
    kept.reverse()
    return kept


def build_messages(instructions: str, passages: Sequence[Passage],
                   history: Iterable[Mapping[str, Any]], question: str, *,
                   json_answer: bool = False) -> list[dict[str, Any]]:
    """The messages of the first model call of a turn; ``json_answer`` when the
    answer must be JSON (then no citation markers are asked for)."""
    return [{"role": "system", "content": _system_text(instructions, passages, json_answer)},
            *history_window(history),
            {"role": "user", "content": question}]


def assistant_tool_message(text: str, calls: Sequence[RequestedCall]) -> dict[str, Any]:
    """The model's own reply that asked for ``calls``, as sent back to it."""
    return {"role": "assistant", "content": text or None,
            "tool_calls": [call.as_message_entry() for call in calls]}


def tool_result_message(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}
