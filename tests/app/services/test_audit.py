"""The audit trail: one writer, append-only, filtered reads."""

import datetime as dt
import json

import anyio
import asyncpg
import pytest

pytestmark = pytest.mark.anyio


async def test_entries_are_listed_newest_first_with_filters(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    await services.audit.record("telephony.refused", subject="+441234567890",
                                data={"reason": "unknown_number"})
    await services.audit.record("telephony.signature.rejected", data={"address": "1.2.3.4"})
    everything = (await api.get("/api/admin/audit", headers=admin)).json()["data"]
    assert everything[0]["kind"] == "telephony.signature.rejected"
    refused = (await api.get("/api/admin/audit", headers=admin,
                             params={"kind": "telephony.refused"})).json()["data"]
    assert [e["data"]["reason"] for e in refused] == ["unknown_number"]
    future = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).isoformat()
    later = (await api.get("/api/admin/audit", headers=admin, params={"since": future})).json()
    assert later["data"] == []
    one = (await api.get("/api/admin/audit", headers=admin, params={"limit": "1"})).json()
    assert len(one["data"]) == 1


async def test_bad_filters_are_422(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    for params in ({"limit": "0"}, {"limit": "x"}, {"since": "yesterday"},
                   {"since": "2026-01-01T00:00:00"}):
        assert (await api.get("/api/admin/audit", headers=admin, params=params)).status_code == 422


async def test_the_database_refuses_to_rewrite_history(services, database):
    await services.audit.record("x.y")
    connection = await asyncpg.connect(database)
    try:
        with pytest.raises(asyncpg.RaiseError, match="append-only"):
            await connection.execute("UPDATE audit_entry SET kind = 'z'")
        with pytest.raises(asyncpg.RaiseError, match="append-only"):
            await connection.execute("DELETE FROM audit_entry")
    finally:
        await connection.close()


async def test_a_counted_entry_can_only_have_its_count_raised(services, database):
    """Concurrent repeats meet in one row; nothing else of it can be rewritten."""
    async with anyio.create_task_group() as group:
        for _ in range(8):
            group.start_soon(lambda: services.audit.tally("x.flood", "198.51.100.7",
                                                          data={"address": "198.51.100.7"}))
    await services.audit.tally("x.flood", "198.51.100.8")
    rows = await services.audit.query(kind="x.flood")
    assert sorted(row["occurrences"] for row in rows) == [1, 8]
    connection = await asyncpg.connect(database)
    try:
        for change in ("occurrences = occurrences - 1", "occurrences = occurrences + 1, "
                       "data = '{}'", "tally_key = NULL", "kind = 'z'"):
            with pytest.raises(asyncpg.RaiseError, match="append-only"):
                await connection.execute(f"UPDATE audit_entry SET {change}")
    finally:
        await connection.close()


async def test_credential_like_keys_never_reach_the_trail(services):
    await services.audit.record("x", data={"password": "p", "api_key": "k", "reason": "r"})
    rows = await services.audit.query(kind="x")
    assert "p" not in str(rows[0]["data"]) or "password" not in str(rows[0]["data"])
    assert "reason" in str(rows[0]["data"]) and "api_key" not in str(rows[0]["data"])


async def test_entries_filter_by_actor_and_time_range_and_page_older(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    ann = await services.accounts.create("ann@example.org", "correct horse battery", "user", ())
    for n in range(5):
        await services.audit.record("library.created", actor=ann["id"], data={"name": f"L{n}"})
    await services.audit.record("retention.swept", data={"calls": 1})
    mine = (await api.get("/api/admin/audit", headers=admin,
                          params={"actor_id": str(ann["id"])})).json()
    assert [e["data"]["name"] for e in mine["data"]] == ["L4", "L3", "L2", "L1", "L0"]
    assert {e["actor_email"] for e in mine["data"]} == {"ann@example.org"}
    first = (await api.get("/api/admin/audit", headers=admin,
                           params={"actor_id": str(ann["id"]), "limit": "2"})).json()
    assert [e["data"]["name"] for e in first["data"]] == ["L4", "L3"]
    second = (await api.get("/api/admin/audit", headers=admin, params={
        "actor_id": str(ann["id"]), "limit": "2", "before": str(first["next_before"])})).json()
    assert [e["data"]["name"] for e in second["data"]] == ["L2", "L1"]
    last = (await api.get("/api/admin/audit", headers=admin, params={
        "actor_id": str(ann["id"]), "limit": "2", "before": str(second["next_before"])})).json()
    assert [e["data"]["name"] for e in last["data"]] == ["L0"] and last["next_before"] is None
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat()
    assert (await api.get("/api/admin/audit", headers=admin,
                          params={"until": past})).json()["data"] == []
    soon = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).isoformat()
    window = (await api.get("/api/admin/audit", headers=admin, params={
        "since": past, "until": soon, "kind": "retention.swept"})).json()["data"]
    assert [e["actor_email"] for e in window] == [None]


async def test_an_entry_names_its_subject_while_it_exists(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    ann = await services.accounts.create("ann@example.org", "correct horse battery", "user", ())
    await services.audit.record("feature.override.set", subject=str(ann["id"]),
                                data={"key": "features.telephony", "value": True})
    await services.audit.record("agent.changed", subject="00000000-0000-4000-8000-000000000000")
    gone, override = (await api.get("/api/admin/audit", headers=admin)).json()["data"][:2]
    assert override["subject_name"] == "ann@example.org"
    assert gone["kind"] == "agent.changed" and gone["subject_name"] is None


async def test_bad_audit_filters_are_422_naming_the_field(api, services):
    admin = await api.as_new_user(services, "boss@example.org", role="admin")
    for params, field in (({"actor_id": "ann"}, "actor_id"), ({"before": "0"}, "before"),
                          ({"before": "x"}, "before"), ({"until": "tomorrow"}, "until"),
                          ({"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"},
                           "until")):
        answer = await api.get("/api/admin/audit", headers=admin, params=params)
        assert answer.status_code == 422 and answer.json()["error"]["field"] == field, params


async def test_only_sources_a_stranger_chooses_are_bounded_and_the_crowd_keeps_its_reason(
        services):
    from app.services.audit import MANY_SOURCES, TALLY_SOURCES_PER_WINDOW

    past = TALLY_SOURCES_PER_WINDOW + 5
    for n in range(past):  # calls the carrier signed: each its own entry, however many
        await services.audit.tally("telephony.replayed", f"call-{n} yes",
                                   data={"call_id": f"call-{n}"})
        await services.audit.tally("telephony.refused", f"bad_key 10.0.{n // 250}.{n % 250}",
                                   data={"reason": "bad_key"},
                                   many={"reason": "bad_key", **MANY_SOURCES})
    replayed = await services.audit.query(kind="telephony.replayed", limit=1000)
    assert sorted(json.loads(row["data"])["call_id"] for row in replayed) == sorted(
        f"call-{n}" for n in range(past))
    refused = await services.audit.query(kind="telephony.refused", limit=1000)
    assert len(refused) == TALLY_SOURCES_PER_WINDOW + 1
    assert {json.loads(row["data"])["reason"] for row in refused} == {"bad_key"}
    [crowd] = [row for row in refused
               if json.loads(row["data"]).get("address") == "many addresses"]
    assert crowd["occurrences"] == 5
