"""The agent pipeline's pure parts: events, prompt, citations, tool rules, step budget.

One private module per concern, re-exported here. The I/O around them — retrieval, the
model call, running tools, usage — is ``app.services.pipeline``; the built-in ``local``
model is ``core.local_model``.

- ``_events``: the typed events a run emits and their JSON form.
- ``_prompt``: the messages sent to the model (instructions, numbered passages, history).
- ``_citations``: ``[n]`` markers in an answer mapped back to passages.
- ``_tools``: tool definitions, the ``ToolPolicy`` hook, and what the model is told.
- ``_steps``: a streamed reply assembled (text, tool calls, usage) and the step budget.
"""

__all__ = [
    "CITATION_RULE",
    "STEP_LIMIT_TEXT",
    "TOOL_NAME",
    "AppToolPolicy",
    "CallToolPolicy",
    "Citation",
    "CitationsFound",
    "Failed",
    "Finished",
    "PipelineEvent",
    "ReplyAssembler",
    "RequestedCall",
    "StepBudget",
    "TextDelta",
    "ToolFailed",
    "ToolFinished",
    "ToolPolicy",
    "ToolSpec",
    "ToolStarted",
    "ToolStatus",
    "UsageCounted",
    "assistant_tool_message",
    "build_messages",
    "check_arguments",
    "check_parameters_schema",
    "cited_numbers",
    "event_payload",
    "failure_text",
    "history_window",
    "map_citations",
    "consulted_citations",
    "whole_answer_annotations",
    "parse_arguments",
    "result_text",
    "snippet",
    "tool_result_message",
    "url_annotations",
]

from core.pipeline._citations import (
    cited_numbers,
    consulted_citations,
    map_citations,
    snippet,
    url_annotations,
    whole_answer_annotations,
)
from core.pipeline._events import (
    Citation,
    CitationsFound,
    Failed,
    Finished,
    PipelineEvent,
    TextDelta,
    ToolFinished,
    ToolStarted,
    ToolStatus,
    UsageCounted,
    event_payload,
)
from core.pipeline._prompt import (
    CITATION_RULE,
    assistant_tool_message,
    build_messages,
    history_window,
    tool_result_message,
)
from core.pipeline._steps import STEP_LIMIT_TEXT, ReplyAssembler, RequestedCall, StepBudget
from core.pipeline._tools import (
    TOOL_NAME,
    AppToolPolicy,
    CallToolPolicy,
    ToolFailed,
    ToolPolicy,
    ToolSpec,
    check_arguments,
    check_parameters_schema,
    failure_text,
    parse_arguments,
    result_text,
)
