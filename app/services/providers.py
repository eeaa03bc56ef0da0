"""Providers: the upstreams admins register, users' own keys, and model resolution.

A model name resolves to exactly one provider: registering a name another provider
already serves is refused. ``local`` is the built-in provider (``core.local_model``),
always present, needing no network. A user's own key for a provider, when stored,
replaces the instance key for that user's calls.

``resolve`` is on the hot path of every ``/v1`` call: one statement finds the provider
and the caller's own key together, and the answer is kept for ``cache_seconds`` (as
runtime settings are). A change made through this process is seen at once; one made
through another process within that window.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any, Iterable
from uuid import UUID

from adapters.providers import ProviderClient, Upstream, UpstreamError
from app import db
from app.crypto import EncryptionKeyMissing, SecretBox, key_missing
from app.errors import Conflict, NotFound, Unprocessable, UpstreamFailed
from app.services.audit import AuditLog
from app.services.rows import delete_on_record, find_by_id
from app.tables import Provider, ProviderKey
from core.ids import id_or_none
from core.records import frozen

LOCAL = "local"
_KEY_PURPOSE = "provider.api_key"
_RESOLVE = """
SELECT p.name, p.base_url, p.api_key_enc, k.api_key_enc AS own_key_enc
FROM provider p
LEFT JOIN provider_key k ON k.provider_id = p.id AND k.account_id = $2
WHERE p.enabled AND $1 = ANY(p.models)
ORDER BY p.created_at
LIMIT 1
"""


class ModelNotFound(NotFound, code="model_not_found"):
    """The model does not exist, or the caller may not use it."""


@frozen
class ResolvedModel:
    """Where a model name goes: ``upstream`` is None for the built-in local provider."""

    model: str
    provider: str
    upstream: Upstream | None

    @property
    def is_local(self) -> bool:
        return self.upstream is None


def public_view(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "name": row["name"],
        "base_url": row["base_url"],
        "api_key_set": row["api_key_enc"] is not None,
        "models": list(row["models"] or ()),
        "enabled": row["enabled"],
        "created_at": row["created_at"].isoformat(),
        "updated_at": row["updated_at"].isoformat(),
    }


def _check_names(name: str, base_url: str, models: Iterable[str]) -> list[str]:
    if not name.strip() or len(name) > 100 or name == LOCAL:
        raise Unprocessable("Give the provider a name (not 'local').", field="name")
    if not base_url.startswith(("http://", "https://")):
        raise Unprocessable("base_url must be an http(s) address.", field="base_url")
    cleaned = sorted({m.strip() for m in models if m.strip()})
    if LOCAL in cleaned or any(len(m) > 200 or m.startswith("agent/") for m in cleaned):
        raise Unprocessable("Model names may not be 'local' or start with 'agent/'.",
                            field="models")
    return cleaned


class Providers:
    def __init__(self, box: SecretBox, audit: AuditLog, client: ProviderClient, *,
                 cache_seconds: float = 1.0) -> None:
        self.box = box
        self.audit = audit
        self.client = client
        self.cache_seconds = cache_seconds
        self._refreshing: set[tuple[str, UUID | None]] = set()
        self._resolved: dict[tuple[str, UUID | None], tuple[float, ResolvedModel]] = {}

    def _seal(self, api_key: str, field: str) -> str:
        try:
            return self.box.seal(api_key, _KEY_PURPOSE)
        except EncryptionKeyMissing:
            raise key_missing(field) from None

    async def _ensure_unique_models(self, models: list[str], except_id: UUID | None) -> None:
        if not models:
            return
        async with db.connection() as connection:
            taken = await connection.fetch(
                "SELECT name, models FROM provider WHERE models && $1::text[] "
                "AND ($2::uuid IS NULL OR id <> $2::uuid)", models, except_id)
        if taken:
            clash = sorted(set(models) & set(taken[0]["models"]))[0]
            raise Conflict(f"Model {clash!r} is already served by provider {taken[0]['name']!r}.",
                           code="model_taken", field="models")

    async def find(self, provider_id: str | UUID) -> dict[str, Any]:
        return await find_by_id(Provider, provider_id, "provider")

    async def list(self) -> list[dict[str, Any]]:
        return await Provider.select().order_by(Provider.name)

    async def create(self, *, actor: UUID, name: str, base_url: str, api_key: str | None,
                     models: list[str], enabled: bool = True) -> dict[str, Any]:
        models = _check_names(name, base_url, models)
        if await Provider.exists().where(Provider.name == name):
            raise Conflict("A provider with this name exists.", code="name_taken", field="name")
        await self._ensure_unique_models(models, None)
        row = Provider(name=name, base_url=base_url.rstrip("/"), models=models, enabled=enabled,
                       api_key_enc=self._seal(api_key, "api_key") if api_key else None)
        await row.save()
        self._resolved.clear()
        await self.audit.record("provider.created", actor=actor, subject=str(row.id),
                                data={"name": name, "models": models})
        return await self.find(row.id)

    async def update(self, provider_id: str, *, actor: UUID, changes: dict[str, Any]) -> dict[str, Any]:
        row = await self.find(provider_id)
        name = changes.get("name", row["name"])
        base_url = changes.get("base_url", row["base_url"])
        models = _check_names(name, base_url, changes.get("models", row["models"]))
        if name != row["name"] and await Provider.exists().where(Provider.name == name):
            raise Conflict("A provider with this name exists.", code="name_taken", field="name")
        await self._ensure_unique_models(models, row["id"])
        values: dict[Any, Any] = {Provider.name: name, Provider.base_url: base_url.rstrip("/"),
                                  Provider.models: models,
                                  Provider.updated_at: dt.datetime.now(dt.UTC)}
        if "enabled" in changes:
            values[Provider.enabled] = changes["enabled"]
        if "api_key" in changes:
            key = changes["api_key"]
            values[Provider.api_key_enc] = self._seal(key, "api_key") if key else None
        await Provider.update(values).where(Provider.id == row["id"])
        self._resolved.clear()
        await self.audit.record("provider.changed", actor=actor, subject=str(row["id"]),
                                data={"fields": sorted(changes)})
        return await self.find(row["id"])

    async def delete(self, provider_id: str, *, actor: UUID) -> None:
        row = await self.find(provider_id)
        await delete_on_record(Provider, row, self.audit, "provider", actor=actor)
        self._resolved.clear()

    def upstream_of(self, row: dict[str, Any], user_key_enc: str | None = None) -> Upstream:
        key = self.box.open(user_key_enc, _KEY_PURPOSE) if user_key_enc else None
        callers_key = key is not None
        if key is None:
            key = self.box.open(row["api_key_enc"], _KEY_PURPOSE)
        return Upstream(base_url=row["base_url"], api_key=key, name=row["name"],
                        callers_key=callers_key)

    async def refresh_models(self, provider_id: str, *, actor: UUID) -> dict[str, Any]:
        """Replace the provider's model list with what its /v1/models says now."""
        row = await self.find(provider_id)
        try:
            offered = await self.client.list_models(self.upstream_of(row))
        except UpstreamError as exc:
            raise UpstreamFailed(f"The models could not be listed: {exc}.") from None
        return await self.update(str(row["id"]), actor=actor, changes={"models": offered})

    async def model_names(self) -> list[str]:
        rows = await Provider.select(Provider.models).where(Provider.enabled == True)  # noqa: E712
        return sorted({m for row in rows for m in row["models"]} | {LOCAL})

    async def resolve(self, model: str, account_id: UUID | None) -> ResolvedModel:
        """Where ``model`` goes for ``account_id`` (its own provider key first); 404
        ``model_not_found`` when no enabled provider serves it."""
        if model == LOCAL:
            return ResolvedModel(LOCAL, LOCAL, None)
        now = time.monotonic()
        cached = self._resolved.get((model, account_id))
        if cached is not None and (now - cached[0] < self.cache_seconds
                                   or (model, account_id) in self._refreshing):
            return cached[1]  # fresh, or being looked up again by another request
        self._refreshing.add((model, account_id))
        try:
            async with db.connection() as connection:
                row = await connection.fetchrow(_RESOLVE, model, account_id)
        finally:
            self._refreshing.discard((model, account_id))
        if row is None:
            raise ModelNotFound(f"The model {model!r} does not exist or you do not have "
                                "access to it.", field="model")
        resolved = ResolvedModel(model, row["name"], self.upstream_of(row, row["own_key_enc"]))
        if len(self._resolved) > 10_000:  # many users and models: start again, not grow
            self._resolved.clear()
        self._resolved[(model, account_id)] = (now, resolved)
        return resolved

    # -- a user's own keys --------------------------------------------------------

    async def own_keys(self, account_id: UUID) -> list[dict[str, Any]]:
        rows = await ProviderKey.select(ProviderKey.id, ProviderKey.provider_id.name,
                                        ProviderKey.provider_id, ProviderKey.created_at).where(
            ProviderKey.account_id == account_id)
        return [{"id": str(r["id"]), "provider_id": str(r["provider_id"]),
                 "provider": r["provider_id.name"], "created_at": r["created_at"].isoformat()}
                for r in rows]

    async def set_own_key(self, account_id: UUID, provider_id: str, api_key: str) -> None:
        row = await self.find(provider_id)
        if not api_key:
            raise Unprocessable("api_key must not be empty.", field="api_key")
        sealed = self._seal(api_key, "api_key")
        await ProviderKey.insert(ProviderKey(account_id=account_id, provider_id=row["id"],
                                             api_key_enc=sealed)).on_conflict(
            target=(ProviderKey.account_id, ProviderKey.provider_id), action="DO UPDATE",
            values=[ProviderKey.api_key_enc])
        self._resolved.clear()
        await self.audit.record("provider_key.stored", actor=account_id, subject=str(row["id"]))

    async def delete_own_key(self, account_id: UUID, key_id: str) -> None:
        key_uuid = id_or_none(key_id)
        if key_uuid is None:
            raise NotFound("No such key.")
        deleted = await ProviderKey.delete().where(
            (ProviderKey.id == key_uuid) & (ProviderKey.account_id == account_id)).returning(
            ProviderKey.id)
        self._resolved.clear()
        if not deleted:
            raise NotFound("No such key.")
