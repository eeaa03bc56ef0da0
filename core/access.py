"""Who reaches what: the one access rule every caller goes through.

An account reaches a resource it owns, or one that belongs to a project it is a member
of (owning a project makes you a member). An administrator reaches everything. The app
route, the public API and a telephone call all ask this same rule; a caller on a line
reaches exactly what the line's account reaches through the agent.
"""

from __future__ import annotations

__all__ = ["Reach", "reaches"]

from uuid import UUID

from .records import frozen


@frozen
class Reach:
    """What one account reaches: itself, its projects, and whether it is an administrator."""

    account_id: UUID
    project_ids: frozenset[UUID]
    is_admin: bool

    def covers(self, owner_id: UUID | None, project_id: UUID | None) -> bool:
        return reaches(self, owner_id, project_id)


def reaches(reach: Reach, owner_id: UUID | None, project_id: UUID | None) -> bool:
    if reach.is_admin:
        return True
    if owner_id is not None and owner_id == reach.account_id:
        return True
    return project_id is not None and project_id in reach.project_ids
