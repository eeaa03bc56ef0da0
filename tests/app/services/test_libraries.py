"""Libraries over HTTP: managing them, adding documents, who reaches what, bad input."""

from __future__ import annotations

import anyio
import pytest

from adapters.document_reader import ReaderFailed
from app.services import libraries
from app.services.libraries import MAX_DOCUMENT_BYTES
from app.tables import Chunk, Document, Library

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ann(api, services):
    return await api.as_new_user(services, "ann@example.org")


@pytest.fixture
async def bob(api, services):
    return await api.as_new_user(services, "bob@example.org")


async def new_library(api, headers, **fields) -> dict:
    response = await api.post("/api/libraries", headers=headers, json={"name": "Clinic", **fields})
    assert response.status_code == 201, response.text
    return response.json()


async def add_text(api, headers, library_id, content="We open at nine.", title="Hours",
                   media_type="text/plain"):
    return await api.post(f"/api/libraries/{library_id}/documents", headers=headers,
                          json={"title": title, "media_type": media_type, "content": content})


async def counts() -> tuple[int, int, int]:
    return await Library.count(), await Document.count(), await Chunk.count()


def assert_error(response, status, code=None, field=None):
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["message"]
    if code:
        assert error["code"] == code
    if field:
        assert error["field"] == field


# --- managing Libraries -------------------------------------------------------------


async def test_owner_creates_lists_renames_and_deletes_a_library(api, ann):
    library = await new_library(api, ann, description="Opening hours and fees")
    assert library["name"] == "Clinic" and library["project_id"] is None
    listed = (await api.get("/api/libraries", headers=ann)).json()["data"]
    assert [entry["id"] for entry in listed] == [library["id"]]
    changed = await api.patch(f"/api/libraries/{library['id']}", headers=ann,
                              json={"name": "Clinic FAQ"})
    assert changed.json()["name"] == "Clinic FAQ"
    assert changed.json()["description"] == "Opening hours and fees"
    assert (await api.delete(f"/api/libraries/{library['id']}", headers=ann)).status_code == 204
    assert (await api.get(f"/api/libraries/{library['id']}", headers=ann)).status_code == 404


async def test_deleting_a_library_deletes_its_documents_and_passages(api, ann):
    library = await new_library(api, ann)
    assert (await add_text(api, ann, library["id"])).status_code == 201
    await api.delete(f"/api/libraries/{library['id']}", headers=ann)
    assert await counts() == (0, 0, 0)


@pytest.mark.parametrize("body,field", [({"name": ""}, "name"), ({"name": "x" * 201}, "name"),
                                        ({"name": 7}, "name"), ({}, "name"),
                                        ({"name": "ok", "colour": "red"}, "colour")])
async def test_bad_library_bodies_are_422_and_write_nothing(api, ann, body, field):
    response = await api.post("/api/libraries", headers=ann, json=body)
    assert_error(response, 422, field=field)
    assert await Library.count() == 0


async def test_signing_in_is_required(api):
    assert (await api.get("/api/libraries")).status_code == 401


# --- who reaches what ---------------------------------------------------------------


async def test_another_account_sees_none_of_ann_s_libraries(api, ann, bob):
    library = await new_library(api, ann)
    document = (await add_text(api, ann, library["id"])).json()
    base = f"/api/libraries/{library['id']}"
    assert (await api.get("/api/libraries", headers=bob)).json()["data"] == []
    for method, path in [("GET", base), ("PATCH", base), ("DELETE", base),
                         ("GET", f"{base}/documents"), ("POST", f"{base}/documents"),
                         ("GET", f"{base}/documents/{document['id']}"),
                         ("DELETE", f"{base}/documents/{document['id']}"),
                         ("GET", f"{base}/search?q=nine")]:
        body = {"title": "x", "content": "y"} if method == "POST" else (
            {"name": "mine"} if method == "PATCH" else None)
        response = await api.request(method, path, headers=bob, json=body)
        assert_error(response, 404, "not_found")
    assert (await api.get(base, headers=ann)).json()["name"] == "Clinic"
    assert await counts() == (1, 1, 1)


async def test_a_document_is_found_only_under_its_own_library(api, ann):
    first = await new_library(api, ann)
    second = await new_library(api, ann, name="Other")
    document = (await add_text(api, ann, first["id"])).json()
    response = await api.get(f"/api/libraries/{second['id']}/documents/{document['id']}",
                             headers=ann)
    assert response.status_code == 404


async def test_ids_that_are_not_uuids_are_simply_not_found(api, ann):
    assert (await api.get("/api/libraries/not-a-uuid", headers=ann)).status_code == 404


async def test_project_members_reach_the_project_s_library(api, services, ann, bob):
    carl = await api.as_new_user(services, "carl@example.org")
    project = (await api.post("/api/projects", headers=ann, json={"name": "Surgery"})).json()
    await api.join_project(ann, bob, project["id"])
    library = await new_library(api, ann, project_id=project["id"])
    await add_text(api, ann, library["id"], "Flu vaccines are given on Tuesdays.")
    assert [entry["id"] for entry in (await api.get("/api/libraries", headers=bob)).json()[
        "data"]] == [library["id"]]
    found = await api.get(f"/api/libraries/{library['id']}/search", headers=bob,
                          params={"q": "flu vaccine"})
    assert found.json()["data"][0]["text"] == "Flu vaccines are given on Tuesdays."
    assert (await api.get(f"/api/libraries/{library['id']}", headers=carl)).status_code == 404


async def test_a_library_names_the_project_it_is_in(api, ann, bob):
    """So a member's list tells a shared Library from their own."""
    project = (await api.post("/api/projects", headers=ann, json={"name": "Surgery"})).json()
    await api.join_project(ann, bob, project["id"])
    shared = await new_library(api, ann, project_id=project["id"])
    await new_library(api, bob, name="Mine")
    assert shared["project_name"] == "Surgery"
    listed = (await api.get("/api/libraries", headers=bob)).json()["data"]
    assert {entry["name"]: entry["project_name"] for entry in listed} == {
        "Clinic": "Surgery", "Mine": None}
    detached = await api.patch(f"/api/libraries/{shared['id']}", headers=ann,
                               json={"project_id": None})
    assert (detached.json()["project_id"], detached.json()["project_name"]) == (None, None)


async def test_a_library_joins_only_a_project_its_creator_reaches(api, ann, bob):
    project = (await api.post("/api/projects", headers=ann, json={"name": "Surgery"})).json()
    response = await api.post("/api/libraries", headers=bob,
                              json={"name": "Sneaky", "project_id": project["id"]})
    assert_error(response, 422, "unknown_project", "project_id")
    mine = await new_library(api, bob, name="Mine")
    moved = await api.patch(f"/api/libraries/{mine['id']}", headers=bob,
                            json={"project_id": project["id"]})
    assert_error(moved, 422, "unknown_project", "project_id")
    assert await Library.count() == 1


async def test_only_the_owner_or_an_administrator_moves_a_library_between_projects(
        api, services, ann, bob):
    """A member who could take the owner's Library into a project of their own would
    keep it after being removed from the owner's project."""
    project = (await api.post("/api/projects", headers=ann, json={"name": "Surgery"})).json()
    await api.join_project(ann, bob, project["id"])
    library = await new_library(api, ann, project_id=project["id"])
    bobs = (await api.post("/api/projects", headers=bob, json={"name": "Mine"})).json()
    url = f"/api/libraries/{library['id']}"
    for target in (bobs["id"], None):
        moved = await api.patch(url, headers=bob, json={"project_id": target})
        assert_error(moved, 403, "not_owner", "project_id")
    # A member still edits what the project holds, naming the project it is in.
    renamed = await api.patch(url, headers=bob, json={"name": "Notes",
                                                      "project_id": project["id"]})
    assert renamed.status_code == 200 and renamed.json()["project_id"] == project["id"]
    me = (await api.get("/api/me", headers=bob)).json()["id"]
    await api.delete(f"/api/projects/{project['id']}/members/{me}", headers=ann)
    assert (await api.get(url, headers=bob)).status_code == 404
    other = (await api.post("/api/projects", headers=ann, json={"name": "Other"})).json()
    assert (await api.patch(url, headers=ann, json={"project_id": other["id"]})).json()[
        "project_id"] == other["id"]
    admin = await api.as_new_user(services, "root@example.org", role="admin")
    assert (await api.patch(url, headers=admin, json={"project_id": None})).json()[
        "project_id"] is None


async def test_an_administrator_reaches_every_library(api, services, ann):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    library = await new_library(api, ann)
    assert (await api.get(f"/api/libraries/{library['id']}", headers=admin)).status_code == 200


# --- adding documents ---------------------------------------------------------------


async def test_documents_are_listed_without_content_and_read_with_it(api, ann):
    library = await new_library(api, ann)
    created = (await add_text(api, ann, library["id"], "We open\r\n\r\n\r\nat nine.")).json()
    assert created["media_type"] == "text/plain" and created["size_bytes"] == 21
    listed = (await api.get(f"/api/libraries/{library['id']}/documents", headers=ann)).json()
    assert [d["id"] for d in listed["data"]] == [created["id"]]
    assert "content" not in listed["data"][0]
    document = (await api.get(f"/api/libraries/{library['id']}/documents/{created['id']}",
                              headers=ann)).json()
    assert document["content"] == "We open\n\nat nine."
    assert (await api.get(f"/api/libraries/{library['id']}", headers=ann)).json()[
        "document_count"] == 1


async def test_the_list_shows_each_documents_preview_and_that_it_is_indexed(api, ann):
    library = await new_library(api, ann)
    short = (await add_text(api, ann, library["id"], "We open\r\n\r\n\r\nat nine.")).json()
    long = (await add_text(api, ann, library["id"], "Opening   hours " * 2000)).json()
    listed = (await api.get(f"/api/libraries/{library['id']}/documents", headers=ann)).json()
    by_id = {d["id"]: d for d in listed["data"]}
    assert by_id[short["id"]]["preview"] == "We open at nine."
    assert by_id[short["id"]]["passages"] == 1 and by_id[short["id"]]["indexed"] is True
    preview = by_id[long["id"]]["preview"]
    assert preview.startswith("Opening hours Opening") and preview.endswith("…")
    assert len(preview) <= 160 and "  " not in preview
    assert by_id[long["id"]]["passages"] > 1 and by_id[long["id"]]["size_bytes"] == 32000


async def test_deleting_a_document_deletes_its_passages(api, ann):
    library = await new_library(api, ann)
    document = (await add_text(api, ann, library["id"], "word " * 2000)).json()
    assert await Chunk.count() > 1
    response = await api.delete(f"/api/libraries/{library['id']}/documents/{document['id']}",
                                headers=ann)
    assert response.status_code == 204
    assert await counts() == (1, 0, 0)


async def test_a_raw_upload_takes_its_title_from_the_query(api, ann):
    library = await new_library(api, ann)
    response = await api.post(f"/api/libraries/{library['id']}/documents", headers={
        **ann, "content-type": "text/html; charset=utf-8"}, params={"title": "Fees page"},
        content="<h1>Fees</h1><p>A visit costs &pound;40.</p>".encode())
    assert response.status_code == 201, response.text
    document = (await api.get(f"/api/libraries/{library['id']}/documents/"
                              f"{response.json()['id']}", headers=ann)).json()
    assert document["title"] == "Fees page" and document["media_type"] == "text/html"
    assert document["content"] == "Fees\n\nA visit costs \u00a340."


async def test_a_raw_upload_in_latin_1_is_decoded(api, ann):
    library = await new_library(api, ann)
    response = await api.post(f"/api/libraries/{library['id']}/documents", headers={
        **ann, "content-type": "text/plain; charset=ISO-8859-1"}, params={"title": "Caf\u00e9"},
        content=b"Caf\xe9 au lait")
    assert response.status_code == 201, response.text
    document = (await api.get(f"/api/libraries/{library['id']}/documents/"
                              f"{response.json()['id']}", headers=ann)).json()
    assert document["content"] == "Caf\u00e9 au lait"


# --- bad documents change nothing ---------------------------------------------------


@pytest.mark.parametrize("body,status,code,field", [
    ({"title": "t", "content": ""}, 422, "empty_document", "content"),
    ({"title": "t", "content": "  \n\t "}, 422, "empty_document", "content"),
    ({"title": "t", "content": "<script>x()</script>", "media_type": "text/html"}, 422,
     "empty_document", "content"),
    ({"title": "t", "content": "a\u0000b"}, 415, "not_text", "content"),
    ({"title": "t", "content": "x", "media_type": "application/pdf"}, 415,
     "unsupported_document_type", "media_type"),
    ({"title": "", "content": "x"}, 422, None, "title"),
    ({"title": "t", "content": "x", "author": "me"}, 422, "unknown_field", "author"),
    ({"content": "x"}, 422, "required", "title"),
    ({"title": "t", "content": 5}, 422, None, "content"),
], ids=["empty", "blank", "only-script", "nul", "pdf", "no-title", "unknown-field",
        "missing-title", "wrong-type"])
async def test_bad_documents_are_refused_and_nothing_is_written(api, ann, body, status, code,
                                                                field):
    library = await new_library(api, ann)
    before = await counts()
    response = await api.post(f"/api/libraries/{library['id']}/documents", headers=ann,
                              json=body)
    assert_error(response, status, code, field)
    assert await counts() == before


async def test_binary_uploads_are_415(api, ann):
    library = await new_library(api, ann)
    before = await counts()
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    response = await api.post(f"/api/libraries/{library['id']}/documents", headers={
        **ann, "content-type": "text/plain"}, params={"title": "pic"}, content=png)
    assert_error(response, 415, "not_text")
    response = await api.post(f"/api/libraries/{library['id']}/documents", headers={
        **ann, "content-type": "image/png"}, params={"title": "pic"}, content=png)
    assert_error(response, 415, "unsupported_document_type")
    assert await counts() == before


async def test_a_raw_upload_without_a_title_is_422(api, ann):
    library = await new_library(api, ann)
    response = await api.post(f"/api/libraries/{library['id']}/documents", headers={
        **ann, "content-type": "text/plain"}, content=b"hello")
    assert_error(response, 422, "required", "title")
    assert await Document.count() == 0


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "raw"])
async def test_documents_over_the_cap_are_413(api, ann, as_json):
    library = await new_library(api, ann)
    huge = "word " * (MAX_DOCUMENT_BYTES // 5 + 1)
    path = f"/api/libraries/{library['id']}/documents"
    if as_json:
        response = await api.post(path, headers=ann, json={"title": "big", "content": huge})
    else:
        response = await api.post(path, headers={**ann, "content-type": "text/plain"},
                                  params={"title": "big"}, content=huge.encode())
    assert_error(response, 413, "payload_too_large")
    assert await Document.count() == 0


async def test_a_document_at_the_cap_is_taken_whole(api, ann):
    library = await new_library(api, ann)
    text = ("Paragraph of ordinary words for the cap. " * 20 + "\n\n") * (
        MAX_DOCUMENT_BYTES // 842)
    response = await api.post(f"/api/libraries/{library['id']}/documents",
                              headers={**ann, "content-type": "text/plain"},
                              params={"title": "big"}, content=text.encode(),
                              timeout=180)  # six thousand passages: slow on a busy machine
    assert response.status_code == 201, response.text
    assert await Chunk.count() > 6000


async def test_a_document_not_read_in_time_is_422_and_the_next_one_is_read(api, ann,
                                                                           monkeypatch):
    library = await new_library(api, ann)
    monkeypatch.setattr(libraries, "READ_SECONDS", 0.001)  # no upload is read so soon
    slow = await add_text(api, ann, library["id"], "- *a* [b](c)\n" * 20_000,
                          media_type="text/markdown")
    assert_error(slow, 422, "document_too_complex", "content")
    assert await counts() == (1, 0, 0)
    monkeypatch.undo()
    assert (await add_text(api, ann, library["id"])).status_code == 201


async def test_an_upload_that_waits_too_long_for_its_turn_is_503(api, ann, monkeypatch):
    library = await new_library(api, ann)
    monkeypatch.setattr(libraries, "QUEUE_SECONDS", 0.001)
    answers = {}

    async def upload(name, content):
        answers[name] = await add_text(api, ann, library["id"], content, title=name,
                                       media_type="text/markdown")

    async with anyio.create_task_group() as both:
        both.start_soon(upload, "long", "- *a* [b](c)\n" * 200_000)
        await anyio.sleep(0.2)  # the long one is being read
        both.start_soon(upload, "short", "We open at nine.")
    assert answers["long"].status_code == 201, answers["long"].text
    assert_error(answers["short"], 503, "busy_reading")
    assert answers["short"].headers["retry-after"] == "1"
    assert [d["title"] for d in (await api.get(f"/api/libraries/{library['id']}/documents",
                                               headers=ann)).json()["data"]] == ["long"]


async def test_a_reader_that_fails_is_503_and_stores_nothing(api, ann, monkeypatch):
    library = await new_library(api, ann)

    async def dies(*args):
        raise ReaderFailed("the reading process exited with -9")

    monkeypatch.setattr(libraries, "read_in_process", dies)
    assert_error(await add_text(api, ann, library["id"]), 503, "reader_failed")
    assert await counts() == (1, 0, 0)


async def test_markdown_built_to_be_slow_is_read_whole(api, ann):
    library = await new_library(api, ann)
    response = await add_text(api, ann, library["id"], "**a " * 200_000,
                              media_type="text/markdown")
    assert response.status_code == 201, response.text


async def test_a_failure_while_writing_passages_leaves_no_document(api, services, ann,
                                                                   monkeypatch):
    library = await new_library(api, ann)

    async def fail(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(services.libraries, "_insert_chunks", fail)
    response = await add_text(api, ann, library["id"])
    assert response.status_code == 500
    assert await counts() == (1, 0, 0)
