"""Projects: shared spaces whose members reach the agents and Libraries they hold.

The owner and administrators manage a project and its members; members reach what it
holds, and may leave it. Anyone else gets 404.

Joining takes two people: a manager invites an email, and the account with that email
accepts (``/api/me/invitations``). An invitation is kept for any well-formed email,
whether or not an account has it, and is listed with the project alike, so neither the
answer nor the project's page tells an owner who has an account here; and nobody is
put in a project, with its agents in their lists, without agreeing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from uuid import UUID

from piccolo.columns import Column
from piccolo.table import Table

from app.errors import NotFound, Unprocessable
from app.services.access import parse_id, reach_of
from app.services.accounts import Identity, normalise_email
from app.services.audit import AuditLog
from app.tables import Project, ProjectInvitation, ProjectMember


def _check_name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= 200:
        raise Unprocessable("A project name has 1 to 200 characters.", field="name")
    return name


class Projects:
    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit

    async def _view(self, row: dict[str, Any], identity: Identity) -> dict[str, Any]:
        """A project as ``identity`` sees it: its members, and for those who manage it,
        the emails invited and not yet joined (someone invited has agreed to nothing,
        so the members are not shown who they are)."""
        members = await ProjectMember.select(
            ProjectMember.account_id, ProjectMember.account_id.email).where(
            ProjectMember.project_id == row["id"])
        view = {"id": str(row["id"]), "name": row["name"], "owner_id": str(row["owner_id"]),
                "owner_email": row["owner_email"],
                "created_at": row["created_at"].isoformat(),
                "members": [{"account_id": str(m["account_id"]),
                             "email": m["account_id.email"]} for m in members]}
        if _manages(identity, row):
            invited = await ProjectInvitation.select(
                ProjectInvitation.id, ProjectInvitation.email, ProjectInvitation.created_at
            ).where(ProjectInvitation.project_id == row["id"]).order_by(ProjectInvitation.email)
            view["invitations"] = [{"id": str(i["id"]), "email": i["email"],
                                    "invited_at": i["created_at"].isoformat()} for i in invited]
        return view

    async def _reachable(self, identity: Identity, project_id: str | UUID) -> dict[str, Any]:
        pid = parse_id(project_id, "project")
        reach = await reach_of(identity)
        row = await _projects().where(Project.id == pid).first()
        if row is None or not (reach.is_admin or pid in reach.project_ids):
            raise NotFound("No such project.")
        return row

    async def _managed(self, identity: Identity, project_id: str | UUID) -> dict[str, Any]:
        row = await self._reachable(identity, project_id)
        if not _manages(identity, row):
            raise NotFound("No such project.")
        return row

    async def list(self, identity: Identity) -> list[dict[str, Any]]:
        reach = await reach_of(identity)
        query = _projects().order_by(Project.name)
        if not reach.is_admin:
            if not reach.project_ids:
                return []
            query = query.where(Project.id.is_in(list(reach.project_ids)))
        return [await self._view(row, identity) for row in await query]

    async def get(self, identity: Identity, project_id: str) -> dict[str, Any]:
        return await self._view(await self._reachable(identity, project_id), identity)

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

    async def invite(self, identity: Identity, project_id: str, email: str) -> None:
        """Invite ``email`` to the project: kept once per email, whether or not an
        account has it, so the caller learns nothing of who has an account here."""
        row = await self._managed(identity, project_id)
        email = normalise_email(email)
        invited = await ProjectInvitation.insert(ProjectInvitation(
            project_id=row["id"], email=email, invited_by=identity.account_id)).on_conflict(
            action="DO NOTHING").returning(ProjectInvitation.id)
        if invited:
            await self.audit.record("project.member_invited", actor=identity.account_id,
                                    subject=str(row["id"]), data={"email": email})

    async def withdraw(self, identity: Identity, project_id: str, invitation_id: str) -> None:
        """A manager takes back an invitation not yet accepted."""
        row = await self._managed(identity, project_id)
        withdrawn = await _take_out(ProjectInvitation, ProjectInvitation.id, row["id"],
                                    invitation_id, "invitation")
        await self.audit.record("project.invitation_withdrawn", actor=identity.account_id,
                                subject=str(row["id"]), data={"email": withdrawn["email"]})

    async def remove_member(self, identity: Identity, project_id: str, account_id: str) -> None:
        """A manager removes a member; a member may remove only themselves (leave)."""
        leaving = parse_id(account_id, "member") == identity.account_id
        row = await (self._reachable if leaving else self._managed)(identity, project_id)
        await _take_out(ProjectMember, ProjectMember.account_id, row["id"], account_id, "member")
        if leaving:
            await self.audit.record("project.left", actor=identity.account_id,
                                    subject=str(row["id"]))
            return
        await self.audit.record("project.member_removed", actor=identity.account_id,
                                subject=str(row["id"]), data={"account_id": account_id})

    async def invitations(self, identity: Identity) -> list[dict[str, Any]]:
        """The invitations waiting for the caller's email, oldest first."""
        rows = await ProjectInvitation.select(
            ProjectInvitation.id, ProjectInvitation.project_id,
            ProjectInvitation.project_id.name, ProjectInvitation.invited_by.email,
            ProjectInvitation.created_at).where(
            ProjectInvitation.email == identity.email).order_by(ProjectInvitation.created_at)
        return [{"id": str(r["id"]), "project_id": str(r["project_id"]),
                 "project_name": r["project_id.name"], "invited_by": r["invited_by.email"],
                 "invited_at": r["created_at"].isoformat()} for r in rows]

    async def accept(self, identity: Identity, invitation_id: str) -> dict[str, Any]:
        """Join the project an invitation for the caller's email names."""
        invitation = await self._addressed(identity, invitation_id)
        async with ProjectMember._meta.db.transaction():
            taken = await ProjectInvitation.delete().where(
                ProjectInvitation.id == invitation["id"]).returning(ProjectInvitation.id)
            if not taken:  # accepted or withdrawn a moment ago
                raise NotFound("No such invitation.")
            await ProjectMember.insert(ProjectMember(
                project_id=invitation["project_id"], account_id=identity.account_id)
            ).on_conflict(action="DO NOTHING")
            await self.audit.record("project.joined", actor=identity.account_id,
                                    subject=str(invitation["project_id"]))
        return await self.get(identity, str(invitation["project_id"]))

    async def decline(self, identity: Identity, invitation_id: str) -> None:
        """Turn down an invitation for the caller's email."""
        invitation = await self._addressed(identity, invitation_id)
        declined = await ProjectInvitation.delete().where(
            ProjectInvitation.id == invitation["id"]).returning(ProjectInvitation.id)
        if not declined:  # accepted or withdrawn a moment ago
            raise NotFound("No such invitation.")
        await self.audit.record("project.invitation_declined", actor=identity.account_id,
                                subject=str(invitation["project_id"]))

    async def _addressed(self, identity: Identity, invitation_id: str) -> dict[str, Any]:
        row = await ProjectInvitation.select().where(
            (ProjectInvitation.id == parse_id(invitation_id, "invitation"))
            & (ProjectInvitation.email == identity.email)).first()
        if row is None:
            raise NotFound("No such invitation.")
        return row


async def project_names(project_ids: Iterable[UUID | None]) -> dict[UUID, str]:
    """The names of the given projects by id (None, for nothing in a project, is
    passed over): what an agent's or Library's view shows of the project it is in."""
    wanted = {pid for pid in project_ids if pid is not None}
    if not wanted:
        return {}
    rows = await Project.select(Project.id, Project.name).where(Project.id.is_in(list(wanted)))
    return {row["id"]: row["name"] for row in rows}


def placement(row: dict[str, Any], project_name: str | None) -> dict[str, Any]:
    """Where an agent or a Library stands, as its view shows it: whose it is, and the
    project it is in by id and by name (both None when it is in none). The name is
    there so a list says where each thing is without looking each project up, and an
    owner who has left the project still reads where their thing is."""
    return {"owner_id": str(row["owner_id"]),
            "project_id": str(row["project_id"]) if row["project_id"] else None,
            "project_name": project_name}


def _projects() -> Any:
    """A select of projects with their owner's email, which every view shows."""
    return Project.select(*Project.all_columns(), Project.owner_id.email.as_alias("owner_email"))


def _manages(identity: Identity, project: dict[str, Any]) -> bool:
    """The owner and administrators manage a project; its members only reach it."""
    return identity.is_admin or project["owner_id"] == identity.account_id


async def _take_out(table: type[Table], column: Column, project_id: UUID, given: str,
                    noun: str) -> dict[str, Any]:
    """Delete the project's row of ``table`` whose ``column`` is ``given`` and return it;
    404 naming ``noun`` when the project has none."""
    removed = await table.delete().where(
        (table.project_id == project_id) & (column == parse_id(given, noun))).returning(
        *table.all_columns())
    if not removed:
        raise NotFound(f"No such {noun}.")
    return removed[0]
