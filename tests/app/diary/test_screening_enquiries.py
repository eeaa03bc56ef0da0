"""The screening list at /api/conflict-names and enquiries at /api/enquiries
(spec: telephony.md "Screening list", "Endpoints"; who may see what)."""

from __future__ import annotations

import uuid

import pytest

from app.tables import AuditEntry, Enquiry, NotifyOutbox, ScreeningName, TelephonyCall
from tests.app.diary.calls import CALLER, a_call, a_target

pytestmark = pytest.mark.anyio


async def me(api, headers) -> uuid.UUID:
    return uuid.UUID((await api.get("/api/me", headers=headers)).json()["id"])


# -- the screening list


async def test_pasted_names_are_added_once_and_counted(api, owner):
    pasted = "Dr Jane O'Neil\nJane ONeil\n\n  Acme Ltd  \nSmith\n" + "x" * 250
    added = await api.post("/api/conflict-names", headers=owner,
                           json={"names": pasted, "note": "Matter 2027/14"})
    assert added.status_code == 200, added.text
    assert added.json() == {"added": 4, "skipped": 1, "count": 4}
    again = await api.post("/api/conflict-names", headers=owner,
                           json={"names": "ACME Limited\nJohn Brown"})
    assert again.json() == {"added": 1, "skipped": 1, "count": 5}
    listed = (await api.get("/api/conflict-names", headers=owner)).json()
    assert listed["exists"] and listed["count"] == 5
    names = {n["name"]: n["note"] for n in listed["names"]}
    assert names["Dr Jane O'Neil"] == "Matter 2027/14" and names["John Brown"] is None
    assert "x" * 200 in names and "x" * 201 not in names  # cut at 200 characters
    # The audit trail keeps counts, never names.
    entries = await AuditEntry.select().where(
        AuditEntry.kind == "screening.names.added").order_by(AuditEntry.id).output(load_json=True)
    assert [e["data"] for e in entries] == [{"added": 4, "skipped": 1},
                                            {"added": 1, "skipped": 1}]
    assert "Neil" not in str(entries)


@pytest.mark.parametrize("names", ["", "   \n\n", "-\n--"])
async def test_an_empty_paste_is_refused_and_nothing_is_added(api, owner, names):
    await api.post("/api/conflict-names", headers=owner, json={"names": "Jane Smith"})
    refused = await api.post("/api/conflict-names", headers=owner,
                             json={"names": names, "note": "Matter 1"})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"] == {"code": "no_names", "field": "names",
                                       "message": "paste at least one name, one per line."}
    assert (await api.get("/api/conflict-names", headers=owner)).json()["count"] == 1


async def test_more_than_2000_names_are_refused_and_nothing_is_added(api, owner):
    names = "\n".join(f"Person Number{i}" for i in range(2001))
    refused = await api.post("/api/conflict-names", headers=owner, json={"names": names})
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "names"
    assert await ScreeningName.count() == 0
    allowed = await api.post("/api/conflict-names", headers=owner,
                             json={"names": "\n".join(names.splitlines()[:2000])})
    assert allowed.json()["added"] == 2000


async def test_names_are_removed_by_any_spelling_by_id_or_all_at_once(api, owner):
    await api.post("/api/conflict-names", headers=owner,
                   json={"names": "Jane O'Neil\nAcme Ltd\nJohn Brown"})
    removed = await api.request("DELETE", "/api/conflict-names", headers=owner,
                                json={"names": "Mrs JANE ONEIL"})
    assert removed.json() == {"removed": 1, "count": 2}
    one = (await api.get("/api/conflict-names", headers=owner)).json()["names"][0]
    by_id = await api.delete(f"/api/conflict-names/{one['id']}", headers=owner)
    assert by_id.json() == {"removed": 1, "count": 1}
    assert (await api.delete(f"/api/conflict-names/{one['id']}", headers=owner)).status_code == 404
    neither = await api.request("DELETE", "/api/conflict-names", headers=owner, json={})
    assert neither.status_code == 422
    everything = await api.request("DELETE", "/api/conflict-names", headers=owner,
                                   json={"all": True})
    assert everything.json() == {"removed": 1, "count": 0}


async def test_who_sees_the_names_and_who_sees_only_the_size(api, services, owner, stranger):
    await api.post("/api/conflict-names", headers=owner, json={"names": "Jane O'Neil\nAcme Ltd"})
    account = str(await me(api, owner))
    registrar = await api.as_new_user(services, "reg@example.org",
                                      permissions=("telephony.manage",))
    summary = await api.get("/api/conflict-names", headers=registrar,
                            params={"account_id": account})
    assert summary.status_code == 200
    assert summary.json() == {"account_id": account, "exists": True, "count": 2}
    assert "Neil" not in summary.text
    stranger_id = str(await me(api, stranger))
    empty = await api.get("/api/conflict-names", headers=registrar,
                          params={"account_id": stranger_id})
    assert empty.json() == {"account_id": stranger_id, "exists": False, "count": 0}
    # A registrar may not change another account's list.
    for method in ("POST", "DELETE"):
        response = await api.request(method, "/api/conflict-names", headers=registrar,
                                     params={"account_id": account}, json={"names": "X Y"})
        assert response.status_code == 404
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    full = await api.get("/api/conflict-names", headers=admin, params={"account_id": account})
    assert {n["name"] for n in full.json()["names"]} == {"Jane O'Neil", "Acme Ltd"}
    # Anyone else: the same 404 as for nothing.
    for method, body in (("GET", None), ("POST", {"names": "A B"}), ("DELETE", {"all": True})):
        response = await api.request(method, "/api/conflict-names", headers=stranger,
                                     params={"account_id": account}, json=body)
        assert response.status_code == 404
    assert await ScreeningName.count() == 2


# -- enquiries


async def test_a_taken_message_is_an_enquiry_with_its_notification(api, services, owner):
    account = await me(api, owner)
    await a_target(account)
    call = await a_call(account)
    await services.diary.enquiries.take(call, caller_name="Jane Smith", subject="Boiler",
                                        message="The boiler in flat 4 is leaking again.")
    [enquiry] = (await api.get("/api/enquiries", headers=owner)).json()["data"]
    assert enquiry["caller_number"] == CALLER and enquiry["caller_name"] == "Jane Smith"
    assert enquiry["subject"] == "Boiler" and enquiry["status"] == "new"
    assert enquiry["message"] == "The boiler in flat 4 is leaking again."
    assert enquiry["call_id"] == str(call.call_id)
    [outbox] = await NotifyOutbox.select()
    assert outbox["event"] == "message_taken" and outbox["subject_id"] == uuid.UUID(enquiry["id"])
    assert "Jane Smith" in outbox["text"] and CALLER in outbox["text"]
    assert "Boiler" in outbox["text"] and "leaking" not in outbox["text"]  # nothing said


async def test_enquiries_are_handled_with_a_status_and_a_note(api, services, owner):
    call = await a_call(await me(api, owner))
    row = await services.diary.enquiries.take(call, caller_name=None, subject="Invoice",
                                              message="Please call back about invoice 12.")
    path = f"/api/enquiries/{row['id']}"
    changed = await api.patch(path, headers=owner, json={"status": "in_hand", "note": "Rang"})
    assert changed.status_code == 200
    assert (changed.json()["status"], changed.json()["note"]) == ("in_hand", "Rang")
    done = (await api.patch(path, headers=owner, json={"status": "done"})).json()
    assert done["note"] == "Rang"  # absent fields are kept
    cleared = (await api.patch(path, headers=owner, json={"note": None})).json()
    assert cleared["note"] is None and cleared["status"] == "done"
    for body, field in (({"status": "lost"}, "status"), ({"status": None}, "status"),
                        ({"note": "x" * 2001}, "note"), ({"colour": 1}, "colour")):
        refused = await api.patch(path, headers=owner, json=body)
        assert refused.status_code == 422 and refused.json()["error"]["field"] == field
    assert (await api.get(path, headers=owner)).json() == cleared
    new_only = await api.get("/api/enquiries", headers=owner, params={"status": "new"})
    assert new_only.json()["data"] == []


async def test_enquiries_are_the_owners_and_listed_for_telephony_managers(api, services, owner,
                                                                          stranger):
    call = await a_call(await me(api, owner))
    row = await services.diary.enquiries.take(call, caller_name="Jane Smith", subject="Lease",
                                              message="Call me.")
    path = f"/api/enquiries/{row['id']}"
    assert (await api.get(path, headers=stranger)).status_code == 404
    assert (await api.patch(path, headers=stranger, json={"status": "done"})).status_code == 404
    assert (await api.get("/api/enquiries", headers=stranger)).json()["data"] == []
    assert (await api.get("/api/enquiries", headers=stranger,
                          params={"account_id": str(call.account_id)})).status_code == 404
    assert (await api.get("/api/admin/telephony/enquiries", headers=stranger)).status_code == 403
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    assert (await api.get(path, headers=admin)).status_code == 200
    manager = await api.as_new_user(services, "reg@example.org",
                                    permissions=("telephony.manage",))
    listed = (await api.get("/api/admin/telephony/enquiries", headers=manager)).json()["data"]
    assert [e["id"] for e in listed] == [str(row["id"])]
    assert (await api.get(path, headers=manager)).status_code == 404  # not the owner's view
    assert (await Enquiry.select(Enquiry.status))[0]["status"] == "new"


async def test_an_enquiry_outlives_its_call(api, services, owner):
    call = await a_call(await me(api, owner))
    row = await services.diary.enquiries.take(call, caller_name="Jane Smith", subject="Lease",
                                              message="Call me.")
    await TelephonyCall.delete().where(TelephonyCall.id == call.call_id)
    kept = (await api.get(f"/api/enquiries/{row['id']}", headers=owner)).json()
    assert kept["call_id"] is None and kept["message"] == "Call me."
