"""What an agent pipeline run emits, as typed events, and their JSON form.

What belongs here: the frozen event types every caller of the pipeline receives (the
app's chat route, the public ``/v1`` API, a telephone call) and ``event_payload``, the
one JSON rendering of each. Each caller renders the stream its own way — SSE frames,
``chat.completion.chunk`` objects, speech — from these same values.

Order of a run: any number of ``TextDelta``, ``ToolStarted``/``ToolFinished`` pairs and
``UsageCounted`` (one per model call); then ``CitationsFound``; then, if the run
failed, one ``Failed``; always last, exactly one ``Finished``.
"""

from __future__ import annotations

__all__ = [
    "Citation",
    "CitationsFound",
    "Failed",
    "Finished",
    "PipelineEvent",
    "TextDelta",
    "ToolFinished",
    "ToolStarted",
    "ToolStatus",
    "UsageCounted",
    "event_payload",
]

import enum
from dataclasses import asdict, field
from typing import Any
from uuid import UUID

from ..records import frozen


class ToolStatus(enum.Enum):
    """How one tool call ended; the model is told in every case."""

    #: The tool ran and its result went to the model.
    OK = "ok"
    #: The policy refused it (e.g. a side-effecting tool on a telephone call).
    REFUSED = "refused"
    #: It ran past its time ceiling and was stopped.
    TIMEOUT = "timeout"
    #: It failed, returned something unreadable, or was called wrongly.
    ERROR = "error"


@frozen
class Citation:
    """A passage an answer cites as ``[number]``."""

    number: int
    library_id: UUID
    document_id: UUID
    #: the document's title, as a reader names it
    title: str
    snippet: str

    def as_json(self) -> dict[str, Any]:
        # "document" is the id under the name the /v1 citations use (DESIGN.md "/v1
        # protocol"); "document_id" says the same for readers of the app's own API.
        return {"number": self.number, "library_id": str(self.library_id),
                "document_id": str(self.document_id), "document": str(self.document_id),
                "title": self.title, "snippet": self.snippet}


@frozen
class TextDelta:
    """A piece of the answer's text, in order."""

    text: str


@frozen
class ToolStarted:
    """The model asked for a tool; it is about to run (or be refused)."""

    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@frozen
class ToolFinished:
    """A tool call ended; ``content`` is exactly what the model was told."""

    call_id: str
    name: str
    status: ToolStatus
    content: str


@frozen
class CitationsFound:
    """The passages the answer cites, in the order of their first marker."""

    citations: tuple[Citation, ...]


@frozen
class UsageCounted:
    """One model call's tokens and time (also recorded for the usage dashboard)."""

    model: str
    provider: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int


@frozen
class Failed:
    """The run could not finish. ``status_code`` is what an HTTP caller should answer
    (502/504 for an upstream failure, 404 for a model that does not exist)."""

    code: str
    message: str
    status_code: int = 502
    #: the request parameter the failure is about (an upstream refusing one), if any
    param: str | None = None


@frozen
class Finished:
    """The last event of every run: the whole answer and what it cites.

    ``finish_reason``: ``stop`` (answered), ``length`` (cut by the caller's
    ``max_tokens``), ``tool_limit`` (the model still wanted
    tools when the step budget ran out), ``error`` (a ``Failed`` came before).
    """

    text: str
    citations: tuple[Citation, ...]
    finish_reason: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


PipelineEvent = (TextDelta | ToolStarted | ToolFinished | CitationsFound | UsageCounted
                 | Failed | Finished)

_NAMES: dict[type, str] = {
    TextDelta: "delta", ToolStarted: "tool_started", ToolFinished: "tool_finished",
    CitationsFound: "citations", UsageCounted: "usage", Failed: "error", Finished: "finished",
}


def event_payload(event: PipelineEvent) -> tuple[str, dict[str, Any]]:
    """The event's name and its JSON object, e.g. for an SSE frame."""
    name = _NAMES[type(event)]
    if isinstance(event, CitationsFound):
        return name, {"citations": [c.as_json() for c in event.citations]}
    if isinstance(event, Finished):
        payload = asdict(event)
        payload["citations"] = [c.as_json() for c in event.citations]
        return name, payload
    if isinstance(event, ToolFinished):
        return name, {"call_id": event.call_id, "name": event.name,
                      "status": event.status.value, "content": event.content}
    return name, asdict(event)
