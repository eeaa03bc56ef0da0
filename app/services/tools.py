"""Tools: the registry agents draw from, and the HTTP tools administrators connect.

What belongs here:

- ``ToolRegistry``: built-in tools registered in code (``builtin_tools``; the telephony
  features add theirs with ``register``, declaring ``wants_call=True`` when the handler
  needs the call's ``CallContext``) and the HTTP tools in the ``http_tool`` table,
  resolved together by name for an agent (``for_agent``). A name the agent lists but
  nobody defines any more is skipped, so deleting a tool never breaks an agent.
- ``HttpTools``: the ``/api/admin/tools`` use cases — create, list, read, change,
  delete — with the checks on each field. The optional secret header value is sealed
  with ``message_encryption_key`` and never returned, only whether one is set.

Running a tool within a turn (policy, time ceiling, what the model is told) is the
pipeline's job (``app.services.pipeline``).
"""

from __future__ import annotations

__all__ = ["CallToolHandler", "HttpTools", "Tool", "ToolHandler", "ToolRegistry",
           "public_view", "spec_view"]

import datetime as dt
import re
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any
from uuid import UUID

from adapters.http_tools import HttpToolClient, HttpToolError, HttpToolRequest
from app.crypto import EncryptionKeyMissing, SecretBox, key_missing
from app.errors import Conflict, NotFound, Unprocessable
from app.services.access import parse_id
from app.services.audit import AuditLog
from app.services.builtin_tools import BUILTIN_CALL_TOOLS, BUILTIN_TOOLS
from app.services.call_context import CallContext
from app.services.rows import delete_on_record
from app.tables import HttpTool
from core.pipeline import TOOL_NAME, ToolFailed, ToolSpec, check_parameters_schema
from core.records import frozen

ToolHandler = Callable[[dict[str, Any]], Awaitable[Any]]
#: a handler that also receives the call it runs on (None outside telephone calls)
CallToolHandler = Callable[[dict[str, Any], CallContext | None], Awaitable[Any]]
SECRET_PURPOSE = "http_tool.secret"
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9-]{1,100}$")
# Headers the client itself must set; a tool overriding them would break the request.
_RESERVED_HEADERS = frozenset({"host", "content-type", "content-length", "transfer-encoding",
                               "connection"})


@frozen
class Tool:
    """A tool ready to run: its definition and the coroutine function that runs it.
    With ``wants_call`` the handler is a ``CallToolHandler`` and receives the call."""

    spec: ToolSpec
    run: ToolHandler | CallToolHandler
    wants_call: bool = False

    async def invoke(self, arguments: dict[str, Any], call: CallContext | None) -> Any:
        """Run the handler, passing ``call`` only to a handler that declared it wants it."""
        if self.wants_call:
            return await self.run(arguments, call)  # type: ignore[call-arg]
        return await self.run(arguments)  # type: ignore[call-arg]


class ToolRegistry:
    """Every tool an agent can name: built-ins in memory, HTTP tools in the database."""

    def __init__(self, box: SecretBox, http: HttpToolClient,
                 allow_hosts: Callable[[], Awaitable[Collection[str]]] | None = None) -> None:
        self.box = box
        self.http = http
        #: the egress gate's allow list in force (``egress.allow_hosts``)
        self.allow_hosts = allow_hosts
        self._builtin: dict[str, Tool] = {}
        for spec, handler in BUILTIN_TOOLS:
            self.register(spec, handler)
        for spec, handler in BUILTIN_CALL_TOOLS:
            self.register(spec, handler, wants_call=True)

    def register(self, spec: ToolSpec, handler: ToolHandler | CallToolHandler, *,
                 wants_call: bool = False) -> None:
        """Add a built-in tool; its name must be new and its parameters a JSON schema.
        With ``wants_call`` the handler is called as ``handler(arguments, call)``."""
        problem = check_parameters_schema(spec.parameters)
        if problem or not TOOL_NAME.match(spec.name) or spec.name in self._builtin:
            raise ValueError(f"cannot register tool {spec.name!r}: {problem or 'bad or taken name'}")
        self._builtin[spec.name] = Tool(spec, handler, wants_call)

    def builtin_specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._builtin.values()]

    def is_builtin(self, name: str) -> bool:
        return name in self._builtin

    async def for_agent(self, names: Sequence[str]) -> list[Tool]:
        """The tools among ``names`` that exist now, in the agent's order."""
        wanted = list(dict.fromkeys(names))
        rows = await HttpTool.select().where(HttpTool.name.is_in(wanted)).output(
            load_json=True) if wanted else []
        http = {row["name"]: self._http_tool(row) for row in rows}
        return [self._builtin.get(name) or http[name] for name in wanted
                if name in self._builtin or name in http]

    def _http_tool(self, row: dict[str, Any]) -> Tool:
        spec = ToolSpec(row["name"], row["description"], row["parameters"],
                        side_effecting=row["side_effecting"], usable_on_call=row["usable_on_call"])
        header_name, sealed = row["secret_header_name"], row["secret_header_enc"]

        async def run(arguments: dict[str, Any]) -> Any:
            headers = {}
            if header_name and sealed:
                secret = self.box.open(sealed, SECRET_PURPOSE)
                if secret is None:  # fail closed: never call without its credential
                    raise ToolFailed("its stored credential cannot be read")
                headers[header_name] = secret
            allowed = await self.allow_hosts() if self.allow_hosts is not None else ()
            try:
                return await self.http.call(HttpToolRequest(row["url"], row["method"],
                                                            arguments, headers, allowed))
            except HttpToolError as exc:
                raise ToolFailed(str(exc)) from None

        return Tool(spec, run)


def spec_view(spec: ToolSpec) -> dict[str, Any]:
    """A built-in tool as the API lists it."""
    return {"name": spec.name, "description": spec.description, "parameters": spec.parameters,
            "side_effecting": spec.side_effecting, "usable_on_call": spec.usable_on_call}


def public_view(row: dict[str, Any]) -> dict[str, Any]:
    """A tool as the API shows it: the secret's value never, only whether one is set."""
    return {
        "id": str(row["id"]), "name": row["name"], "description": row["description"],
        "parameters": row["parameters"], "url": row["url"], "method": row["method"],
        "secret_header_name": row["secret_header_name"],
        "secret_header_set": row["secret_header_enc"] is not None,
        "side_effecting": row["side_effecting"], "usable_on_call": row["usable_on_call"],
        "created_at": row["created_at"].isoformat(), "updated_at": row["updated_at"].isoformat(),
    }


def _check_fields(values: dict[str, Any]) -> None:
    """Refuse with 422 naming the first field that is wrong."""
    if not TOOL_NAME.match(values["name"]):
        raise Unprocessable("name: 1 to 64 letters, digits, '_' or '-'.", field="name")
    if not values["description"].strip():
        raise Unprocessable("Describe what the tool does; the model reads it.",
                            field="description")
    problem = check_parameters_schema(values["parameters"])
    if problem:
        raise Unprocessable(problem, field="parameters")
    if not values["url"].startswith(("http://", "https://")) or len(values["url"]) > 2000:
        raise Unprocessable("url must be an http(s) address.", field="url")
    if values["method"] not in METHODS:
        raise Unprocessable(f"method must be one of {', '.join(METHODS)}.", field="method")
    header = values["secret_header_name"]
    if header is not None and (not _HEADER_NAME.match(header)
                               or header.lower() in _RESERVED_HEADERS):
        raise Unprocessable("secret_header_name must be a plain header name such as "
                            "X-Api-Key.", field="secret_header_name")
    if values["secret_header_enc"] is not None and header is None:
        raise Unprocessable("A secret value needs secret_header_name.",
                            field="secret_header_name")


class HttpTools:
    """The administrator's use cases for HTTP tools."""

    def __init__(self, box: SecretBox, audit: AuditLog, registry: ToolRegistry) -> None:
        self.box = box
        self.audit = audit
        self.registry = registry

    def _seal(self, value: str) -> str:
        if not value:
            raise Unprocessable("secret_header_value must not be empty; send null to remove it.",
                                field="secret_header_value")
        try:
            return self.box.seal(value, SECRET_PURPOSE)
        except EncryptionKeyMissing:
            raise key_missing("secret_header_value") from None

    async def _ensure_free(self, name: str, except_id: UUID | None) -> None:
        clause = HttpTool.name == name
        if except_id is not None:
            clause &= HttpTool.id != except_id
        if self.registry.is_builtin(name) or await HttpTool.exists().where(clause):
            raise Conflict(f"A tool named {name!r} exists.", code="name_taken", field="name")

    async def list(self) -> list[dict[str, Any]]:
        return await HttpTool.select().order_by(HttpTool.name).output(load_json=True)

    async def find(self, tool_id: str | UUID) -> dict[str, Any]:
        row = await HttpTool.select().where(HttpTool.id == parse_id(tool_id, "tool")).first(
        ).output(load_json=True)
        if row is None:
            raise NotFound("No such tool.")
        return row

    async def create(self, *, actor: UUID, fields: dict[str, Any]) -> dict[str, Any]:
        """``fields``: the columns by name, with ``secret_header_value`` in clear."""
        secret = fields.pop("secret_header_value", None)
        values = {"method": "POST", "secret_header_name": None, "side_effecting": True,
                  "usable_on_call": False, **fields,
                  "secret_header_enc": self._seal(secret) if secret is not None else None}
        _check_fields(values)
        await self._ensure_free(values["name"], None)
        row = HttpTool(**values)
        await row.save()
        await self.audit.record("http_tool.created", actor=actor, subject=str(row.id),
                                data={"name": values["name"], "url": values["url"]})
        return await self.find(row.id)

    async def update(self, tool_id: str, *, actor: UUID, changes: dict[str, Any]) -> dict[str, Any]:
        """Change the given fields; ``secret_header_value`` None removes the secret."""
        row = await self.find(tool_id)
        values = {key: row[key] for key in ("name", "description", "parameters", "url", "method",
                                            "secret_header_name", "secret_header_enc",
                                            "side_effecting", "usable_on_call")}
        values.update({k: v for k, v in changes.items() if k != "secret_header_value"})
        if "secret_header_value" in changes:
            secret = changes["secret_header_value"]
            values["secret_header_enc"] = self._seal(secret) if secret is not None else None
            if secret is None and "secret_header_name" not in changes:
                values["secret_header_name"] = None
        _check_fields(values)
        if values["name"] != row["name"]:
            await self._ensure_free(values["name"], row["id"])
        values["updated_at"] = dt.datetime.now(dt.UTC)
        await HttpTool.update({getattr(HttpTool, k): v for k, v in values.items()}).where(
            HttpTool.id == row["id"])
        await self.audit.record("http_tool.changed", actor=actor, subject=str(row["id"]),
                                data={"fields": sorted(changes)})
        return await self.find(row["id"])

    async def delete(self, tool_id: str, *, actor: UUID) -> None:
        await delete_on_record(HttpTool, await self.find(tool_id), self.audit, "http_tool",
                               actor=actor)
