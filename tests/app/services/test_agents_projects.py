"""Agents and projects, and the one access rule over them."""

from uuid import UUID

import pytest

from app.tables import Agent, Library

pytestmark = pytest.mark.anyio


async def _library(owner_id, name="Handbook", project_id=None):
    row = Library(name=name, owner_id=owner_id, project_id=project_id)
    await row.save()
    return str(row.id)


async def _me(api, headers):
    return (await api.get("/api/me", headers=headers)).json()


async def _clinic(api, services):
    """Ann's project with Bob a member, and Ann's agent in it."""
    ann = await api.as_new_user(services, "ann@example.org")
    bob = await api.as_new_user(services, "bob@example.org")
    project = (await api.post("/api/projects", headers=ann, json={"name": "Clinic"})).json()
    await api.join_project(ann, bob, project["id"])
    agent = (await api.post("/api/agents", headers=ann, json={
        "name": "Shared", "model": "local", "project_id": project["id"]})).json()
    return ann, bob, project, agent


async def test_agent_lifecycle_create_read_update_archive(api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    library = await _library((await _me(api, ann))["id"])
    created = await api.post("/api/agents", headers=ann, json={
        "name": "Front desk", "model": "local", "instructions": "Be brief.",
        "library_ids": [library], "tools": ["current_time"]})
    assert created.status_code == 201, created.text
    agent = created.json()
    assert agent["library_ids"] == [library] and agent["tool_count"] == 1
    changed = await api.patch(f"/api/agents/{agent['id']}", headers=ann,
                              json={"instructions": "Be kind.", "library_ids": []})
    assert changed.json()["instructions"] == "Be kind." and changed.json()["library_ids"] == []
    archived = await api.post(f"/api/agents/{agent['id']}/archive", headers=ann)
    assert archived.json()["archived"] is True
    assert (await api.get("/api/agents", headers=ann)).json()["data"] == []
    listed = await api.get("/api/agents", headers=ann, params={"include_archived": "true"})
    assert [a["id"] for a in listed.json()["data"]] == [agent["id"]]


async def test_an_archived_agent_cannot_be_called(api, services):
    from app.errors import ApiError
    from app.services.access import reach_of

    ann = await api.as_new_user(services, "ann@example.org")
    agent = (await api.post("/api/agents", headers=ann,
                            json={"name": "A", "model": "local"})).json()
    await api.post(f"/api/agents/{agent['id']}/archive", headers=ann)
    identity = await services.sessions.identify(ann["Authorization"].split()[1])
    with pytest.raises(ApiError) as refused:
        await services.agents.callable(await reach_of(identity), agent["id"])
    assert refused.value.code == "agent_unavailable"


async def test_a_second_account_sees_none_of_the_firsts_agents(api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    bob = await api.as_new_user(services, "bob@example.org")
    agent = (await api.post("/api/agents", headers=ann,
                            json={"name": "A", "model": "local"})).json()
    assert (await api.get("/api/agents", headers=bob)).json()["data"] == []
    for method, path, body in (("GET", f"/api/agents/{agent['id']}", None),
                               ("PATCH", f"/api/agents/{agent['id']}", {"name": "mine"}),
                               ("POST", f"/api/agents/{agent['id']}/archive", None)):
        response = await api.request(method, path, headers=bob, json=body)
        assert response.status_code == 404, (method, path)
    assert (await Agent.select(Agent.name).first())["name"] == "A"


async def test_an_agent_may_only_read_libraries_its_writer_reaches(api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    bob = await api.as_new_user(services, "bob@example.org")
    anns_library = await _library((await _me(api, ann))["id"])
    response = await api.post("/api/agents", headers=bob, json={
        "name": "Spy", "model": "local", "library_ids": [anns_library]})
    assert response.status_code == 422 and response.json()["error"]["field"] == "library_ids"


async def test_unknown_model_is_refused(api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    response = await api.post("/api/agents", headers=ann, json={"name": "A", "model": "gpt-x"})
    assert response.status_code == 404 and response.json()["error"]["code"] == "model_not_found"


async def test_project_members_reach_what_the_project_holds(api, services):
    ann, bob, project, agent = await _clinic(api, services)
    carol = await api.as_new_user(services, "carol@example.org")
    shared_library = await _library((await _me(api, ann))["id"], project_id=project["id"])
    assert (await api.get(f"/api/agents/{agent['id']}", headers=bob)).status_code == 200
    bobs = await api.post("/api/agents", headers=bob, json={
        "name": "Bob's", "model": "local", "library_ids": [shared_library]})
    assert bobs.status_code == 201
    assert (await api.get(f"/api/agents/{agent['id']}", headers=carol)).status_code == 404
    assert (await api.get(f"/api/projects/{project['id']}", headers=carol)).status_code == 404
    # A member reaches the project but does not manage it.
    renamed = await api.patch(f"/api/projects/{project['id']}", headers=bob, json={"name": "x"})
    assert renamed.status_code == 404


async def test_a_member_may_leave_but_removes_nobody_else(api, services):
    ann, bob, project, agent = await _clinic(api, services)
    carol = await api.as_new_user(services, "carol@example.org")
    await api.join_project(ann, carol, project["id"])
    members = f"/api/projects/{project['id']}/members"
    bob_id, carol_id = (await _me(api, bob))["id"], (await _me(api, carol))["id"]
    seen = (await api.get(f"/api/projects/{project['id']}", headers=bob)).json()
    assert seen["owner_email"] == "ann@example.org"
    assert (await api.delete(f"{members}/{carol_id}", headers=bob)).status_code == 404
    assert (await api.delete(f"{members}/{bob_id}", headers=bob)).status_code == 204
    assert (await api.get(f"/api/agents/{agent['id']}", headers=bob)).status_code == 404
    assert (await api.get("/api/projects", headers=bob)).json()["data"] == []
    assert (await api.delete(f"{members}/{bob_id}", headers=bob)).status_code == 404
    left = await services.audit.query(kind="project.left")
    assert [(e["actor_id"], e["subject"]) for e in left] == [(UUID(bob_id), project["id"])]
    remaining = (await api.get(f"/api/projects/{project['id']}", headers=ann)).json()
    assert [m["email"] for m in remaining["members"]] == ["carol@example.org"]


async def test_an_agent_names_the_project_it_is_in(api, services):
    """So a member's list tells a shared agent from their own, and an owner who has
    left the project still sees where their agent is."""
    ann, bob, project, agent = await _clinic(api, services)
    bobs = (await api.post("/api/agents", headers=bob, json={
        "name": "Bob's", "model": "local"})).json()
    assert (agent["project_name"], bobs["project_name"]) == ("Clinic", None)
    await api.patch(f"/api/projects/{project['id']}", headers=ann, json={"name": "Surgery"})
    listed = (await api.get("/api/agents", headers=bob)).json()["data"]
    assert {a["name"]: a["project_name"] for a in listed} == {"Shared": "Surgery",
                                                             "Bob's": None}
    bobs_url = f"/api/agents/{bobs['id']}"
    await api.patch(bobs_url, headers=bob, json={"project_id": project["id"]})
    bob_id = (await _me(api, bob))["id"]
    await api.delete(f"/api/projects/{project['id']}/members/{bob_id}", headers=ann)
    listed = (await api.get("/api/agents", headers=bob)).json()["data"]
    assert [(a["name"], a["project_name"]) for a in listed] == [("Bob's", "Surgery")]
    detached = await api.patch(bobs_url, headers=bob, json={"project_id": None})
    assert (detached.json()["project_id"], detached.json()["project_name"]) == (None, None)


async def test_adding_a_member_does_not_tell_whether_the_email_has_an_account(
        api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    await api.as_new_user(services, "bob@example.org")
    project = (await api.post("/api/projects", headers=ann, json={"name": "Clinic"})).json()
    url = f"/api/projects/{project['id']}/members"
    answers = [await api.post(url, headers=ann, json={"email": email}) for email in (
        "nobody@example.org", "bob@example.org", "BOB@example.org")]
    assert {answer.status_code for answer in answers} == {202}
    assert len({answer.content for answer in answers}) == 1
    seen = (await api.get(f"/api/projects/{project['id']}", headers=ann)).json()
    assert seen["members"] == []
    assert [i["email"] for i in seen["invitations"]] == ["bob@example.org",
                                                         "nobody@example.org"]


async def test_nobody_joins_a_project_without_accepting(api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    bob = await api.as_new_user(services, "bob@example.org")
    project = (await api.post("/api/projects", headers=ann, json={"name": "Clinic"})).json()
    agent = (await api.post("/api/agents", headers=ann, json={
        "name": "Shared", "model": "local", "project_id": project["id"]})).json()
    await api.post(f"/api/projects/{project['id']}/members", headers=ann,
                   json={"email": "bob@example.org"})
    assert (await api.get(f"/api/agents/{agent['id']}", headers=bob)).status_code == 404
    [invitation] = (await api.get("/api/me/invitations", headers=bob)).json()["data"]
    assert (invitation["project_name"], invitation["invited_by"]) == (
        "Clinic", "ann@example.org")
    await api.post(f"/api/projects/{project['id']}/members", headers=ann,
                   json={"email": "carol@example.org"})
    joined = await api.post(f"/api/me/invitations/{invitation['id']}/accept", headers=bob)
    assert joined.status_code == 200
    assert [m["email"] for m in joined.json()["members"]] == ["bob@example.org"]
    assert "invitations" not in joined.json()  # who else is invited is the owner's
    seen = (await api.get(f"/api/projects/{project['id']}", headers=ann)).json()
    assert [i["email"] for i in seen["invitations"]] == ["carol@example.org"]
    assert (await api.get(f"/api/agents/{agent['id']}", headers=bob)).status_code == 200
    assert (await api.get("/api/me/invitations", headers=bob)).json()["data"] == []


async def test_an_invitation_can_be_declined_or_withdrawn_and_is_only_its_email_s(
        api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    bob = await api.as_new_user(services, "bob@example.org")
    carol = await api.as_new_user(services, "carol@example.org")
    project = (await api.post("/api/projects", headers=ann, json={"name": "Clinic"})).json()
    members = f"/api/projects/{project['id']}/members"
    for email in ("bob@example.org", "carol@example.org"):
        await api.post(members, headers=ann, json={"email": email})
    [for_bob] = (await api.get("/api/me/invitations", headers=bob)).json()["data"]
    stolen = await api.post(f"/api/me/invitations/{for_bob['id']}/accept", headers=carol)
    assert stolen.status_code == 404
    assert (await api.delete(f"/api/me/invitations/{for_bob['id']}",
                             headers=bob)).status_code == 204
    [for_carol] = (await api.get("/api/me/invitations", headers=carol)).json()["data"]
    withdrawn = await api.delete(
        f"/api/projects/{project['id']}/invitations/{for_carol['id']}", headers=ann)
    assert withdrawn.status_code == 204
    assert (await api.get("/api/me/invitations", headers=carol)).json()["data"] == []
    seen = (await api.get(f"/api/projects/{project['id']}", headers=ann)).json()
    assert (seen["members"], seen["invitations"]) == ([], [])
    refused = await api.post(members, headers=ann, json={"email": "not an email"})
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "email"


async def test_an_account_made_after_its_invitation_finds_it(api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    project = (await api.post("/api/projects", headers=ann, json={"name": "Clinic"})).json()
    await api.post(f"/api/projects/{project['id']}/members", headers=ann,
                   json={"email": "dora@example.org"})
    dora = await api.as_new_user(services, "dora@example.org")
    await api.join_project(ann, dora, project["id"])
    assert [p["name"] for p in (await api.get("/api/projects", headers=dora)).json()[
        "data"]] == ["Clinic"]


async def test_a_member_cannot_take_an_owners_agent_out_of_the_project(api, services):
    ann, bob, project, agent = await _clinic(api, services)
    bobs = (await api.post("/api/projects", headers=bob, json={"name": "Mine"})).json()
    moved = await api.patch(f"/api/agents/{agent['id']}", headers=bob,
                            json={"project_id": bobs["id"]})
    assert moved.status_code == 403 and moved.json()["error"]["code"] == "not_owner"
    assert (await api.get(f"/api/agents/{agent['id']}", headers=ann)).json()[
        "project_id"] == project["id"]


async def test_an_administrator_reaches_everything(api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    agent = (await api.post("/api/agents", headers=ann,
                            json={"name": "A", "model": "local"})).json()
    assert (await api.get(f"/api/agents/{agent['id']}", headers=admin)).status_code == 200


async def test_null_for_required_agent_fields_is_refused(api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    agent = (await api.post("/api/agents", headers=ann,
                            json={"name": "A", "model": "local"})).json()
    response = await api.patch(f"/api/agents/{agent['id']}", headers=ann, json={"name": None})
    assert response.status_code == 422


async def test_an_owner_s_agents_in_use_have_names_apart(api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    bob = await api.as_new_user(services, "bob@example.org")
    first = (await api.post("/api/agents", headers=ann,
                            json={"name": "Reception", "model": "local"})).json()
    again = await api.post("/api/agents", headers=ann, json={"name": " reception ", "model": "local"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "name_taken"
    assert again.json()["error"]["field"] == "name"
    other = (await api.post("/api/agents", headers=ann,
                            json={"name": "Nights", "model": "local"})).json()
    renamed = await api.patch(f"/api/agents/{other['id']}", headers=ann, json={"name": "RECEPTION"})
    assert renamed.status_code == 409
    bobs = await api.post("/api/agents", headers=bob, json={"name": "Reception", "model": "local"})
    assert bobs.status_code == 201  # another owner's lists are apart
    await api.post(f"/api/agents/{first['id']}/archive", headers=ann)
    assert (await api.patch(f"/api/agents/{other['id']}", headers=ann,
                            json={"name": "Reception"})).status_code == 200
    restored = await api.patch(f"/api/agents/{first['id']}", headers=ann,
                               json={"archived": False})
    assert restored.status_code == 409  # its name went to another while it was archived
    kept = await api.patch(f"/api/agents/{other['id']}", headers=ann,
                           json={"name": "Reception", "instructions": "Be brief."})
    assert kept.status_code == 200  # its own name is no clash


async def test_agents_named_alike_before_are_still_edited_and_members_learn_no_names(
        api, services):
    ann, bob, project, shared = await _clinic(api, services)
    for name in ("Desk", "Desk"):  # as an older version let an owner name them
        await Agent(name=name, model="local", owner_id=(await _me(api, ann))["id"]).save()
    desk = next(a for a in (await api.get("/api/agents", headers=ann)).json()["data"]
                if a["name"] == "Desk")
    edited = await api.patch(f"/api/agents/{desk['id']}", headers=ann,
                             json={"instructions": "Be brief."})
    assert edited.status_code == 200, edited.text
    renamed = await api.patch(f"/api/agents/{shared['id']}", headers=bob, json={"name": "Desk"})
    assert renamed.status_code == 200  # Bob cannot see Ann's own "Desk" agents

