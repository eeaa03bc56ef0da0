"""The list, read and delete routes made once for the collections many modules serve."""

from __future__ import annotations

import inspect

import pytest

from app.routes.collections import deleting, listing, reading

pytestmark = pytest.mark.anyio


def test_a_made_handler_has_the_name_and_parameters_its_route_asks_for():
    for handler, name, parameters in [
        (listing("projects"), "list_projects", ["request", "svc"]),
        (reading("projects", "project_id"), "get_project", ["request", "svc", "project_id"]),
        (deleting("notify_targets", "target_id"), "delete_target",
         ["request", "svc", "target_id"]),
    ]:
        assert handler.__name__ == name
        assert list(inspect.signature(handler).parameters) == parameters
        assert list(handler.__annotations__) == parameters + ["return"]


async def test_each_made_route_answers_for_the_callers_own_and_hides_the_others(api, services):
    ann = await api.as_new_user(services, "ann@example.org")
    bob = await api.as_new_user(services, "bob@example.org")
    project = (await api.post("/api/projects", headers=ann, json={"name": "P"})).json()
    url = f"/api/projects/{project['id']}"
    listed = (await api.get("/api/projects", headers=ann)).json()["data"]
    assert [p["id"] for p in listed] == [project["id"]]
    assert (await api.get("/api/projects", headers=bob)).json()["data"] == []
    assert (await api.get(url, headers=ann)).json()["name"] == "P"
    assert (await api.get(url, headers=bob)).status_code == 404
    assert (await api.delete(url, headers=bob)).status_code == 404
    assert (await api.delete(url, headers=ann)).status_code == 204
    assert (await api.get(url, headers=ann)).status_code == 404
