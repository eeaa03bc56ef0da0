"""Projects: shared spaces whose members reach the agents and Libraries they hold.

The owner and administrators manage a project and its members; members reach what it
holds. Anyone else gets 404.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app.errors import NotFound, Unprocessable
from app.services.access import parse_id, reach_of
from app.services.accounts import Identity
from app.services.audit import AuditLog
from app.tables import Account, Project, ProjectMember


def _check_name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= 200:
        raise Unprocessable("A project name has 1 to 200 characters.", field="name")
    return name


class Projects:
    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit

    async def _view(self, row: dict[str, Any]) -> dict[str, Any]:
        members = await ProjectMember.select(
            ProjectMember.account_id, ProjectMember.account_id.email).where(
            ProjectMember.project_id == row["id"])
        return {"id": str(row["id"]), "name": row["name"], "owner_id": str(row["owner_id"]),
                "created_at": row["created_at"].isoformat(),
                "members": [{"account_id": str(m["account_id"]), "email": m["account_id.email"]}
                            for m in members]}

    async def _reachable(self, identity: Identity, project_id: str | UUID) -> dict[str, Any]:
        pid = parse_id(project_id, "project")
        reach = await reach_of(identity)
        row = await Project.select().where(Project.id == pid).first()
        if row is None or not (reach.is_admin or pid in reach.project_ids):
            raise NotFound("No such project.")
        return row

    async def _managed(self, identity: Identity, project_id: str | UUID) -> dict[str, Any]:
        row = await self._reachable(identity, project_id)
        if not identity.is_admin and row["owner_id"] != identity.account_id:
            raise NotFound("No such project.")
        return row

    async def list(self, identity: Identity) -> list[dict[str, Any]]:
        reach = await reach_of(identity)
        query = Project.select().order_by(Project.name)
        if not reach.is_admin:
            if not reach.project_ids:
                return []
            query = query.where(Project.id.is_in(list(reach.project_ids)))
        return [await self._view(row) for row in await query]

    async def get(self, identity: Identity, project_id: str) -> dict[str, Any]:
        return await self._view(await self._reachable(identity, project_id))

    async def create(self, identity: Identity, name: str) -> dict[str, Any]:
        row = Project(name=_check_name(name), owner_id=identity.account_id)
        await row.save()
        await self.audit.record("project.created", actor=identity.account_id, subject=str(row.id))
        return await self.get(identity, str(row.id))

    async def rename(self, identity: Identity, project_id: str, name: str) -> dict[str, Any]:
        row = await self._managed(identity, project_id)
        await Project.update({Project.name: _check_name(name)}).where(Project.id == row["id"])
        return await self.get(identity, project_id)

    async def delete(self, identity: Identity, project_id: str) -> None:
        row = await self._managed(identity, project_id)
        await Project.delete().where(Project.id == row["id"])
        await self.audit.record("project.deleted", actor=identity.account_id,
                                subject=str(row["id"]))

    async def add_member(self, identity: Identity, project_id: str, email: str) -> None:
        """Make the account with ``email`` a member, if there is one. The caller learns
        nothing either way: no account, a new member and an existing one are answered
        alike, so the form cannot be used to find out who has an account here."""
        row = await self._managed(identity, project_id)
        account = await Account.select(Account.id).where(
            Account.email == email.strip().lower()).first()
        if account is None:
            return
        added = await ProjectMember.insert(
            ProjectMember(project_id=row["id"], account_id=account["id"])).on_conflict(
            action="DO NOTHING").returning(ProjectMember.id)
        if added:
            await self.audit.record("project.member_added", actor=identity.account_id,
                                    subject=str(row["id"]),
                                    data={"account_id": str(account["id"])})

    async def remove_member(self, identity: Identity, project_id: str, account_id: str) -> None:
        row = await self._managed(identity, project_id)
        removed = await ProjectMember.delete().where(
            (ProjectMember.project_id == row["id"])
            & (ProjectMember.account_id == parse_id(account_id, "member"))).returning(
            ProjectMember.id)
        if not removed:
            raise NotFound("No such member.")
        await self.audit.record("project.member_removed", actor=identity.account_id,
                                subject=str(row["id"]), data={"account_id": account_id})
