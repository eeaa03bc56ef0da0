"""Projects, their members and invitations (``/api/projects``, ``/api/me/invitations``)."""

from __future__ import annotations

from blacksheep import Request, Response, Router

from app.bundle import Services
from app.http.bodies import Body, read_body
from app.http.docs import accepts
from app.http.errors import json_response
from app.http.guards import signed_in
from app.routes.collections import deleting, listing, reading


class ProjectBody(Body):
    name: str


class MemberBody(Body):
    email: str


list_projects = listing("projects")


@accepts(ProjectBody)
async def create_project(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, ProjectBody, svc.max_body_bytes)
    return json_response(201, await svc.projects.create(identity, body.name))


get_project = reading("projects", "project_id")


@accepts(ProjectBody)
async def rename_project(request: Request, svc: Services, project_id: str) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, ProjectBody, svc.max_body_bytes)
    return json_response(200, await svc.projects.rename(identity, project_id, body.name))


delete_project = deleting("projects", "project_id")


#: The one answer to adding a member, whether or not the email has an account.
MEMBER_INVITED = {"status": "invited",
                  "message": "The email is invited. Its account joins the project when it "
                             "accepts, under its own invitations."}


@accepts(MemberBody)
async def add_member(request: Request, svc: Services, project_id: str) -> Response:
    identity = await signed_in(request, svc)
    body = await read_body(request, MemberBody, svc.max_body_bytes)
    await svc.projects.invite(identity, project_id, body.email)
    return json_response(202, MEMBER_INVITED)


async def withdraw_invitation(request: Request, svc: Services, project_id: str,
                              invitation_id: str) -> None:
    identity = await signed_in(request, svc)
    await svc.projects.withdraw(identity, project_id, invitation_id)


async def my_invitations(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    return json_response(200, {"data": await svc.projects.invitations(identity)})


async def accept_invitation(request: Request, svc: Services, invitation_id: str) -> Response:
    identity = await signed_in(request, svc)
    return json_response(200, await svc.projects.accept(identity, invitation_id))


async def decline_invitation(request: Request, svc: Services, invitation_id: str) -> None:
    identity = await signed_in(request, svc)
    await svc.projects.decline(identity, invitation_id)


async def remove_member(request: Request, svc: Services, project_id: str,
                        account_id: str) -> None:
    identity = await signed_in(request, svc)
    await svc.projects.remove_member(identity, project_id, account_id)


def register(router: Router) -> None:
    router.add_get("/api/projects", list_projects)
    router.add_post("/api/projects", create_project)
    router.add_get("/api/projects/{project_id}", get_project)
    router.add_patch("/api/projects/{project_id}", rename_project)
    router.add_delete("/api/projects/{project_id}", delete_project)
    router.add_post("/api/projects/{project_id}/members", add_member)
    router.add_delete("/api/projects/{project_id}/members/{account_id}", remove_member)
    router.add_delete("/api/projects/{project_id}/invitations/{invitation_id}",
                      withdraw_invitation)
    router.add_get("/api/me/invitations", my_invitations)
    router.add_post("/api/me/invitations/{invitation_id}/accept", accept_invitation)
    router.add_delete("/api/me/invitations/{invitation_id}", decline_invitation)
