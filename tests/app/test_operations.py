"""Health, the access log line, and the schema the tables describe."""

import json
import logging
import os

import asyncpg
import pytest

from app.tables import ALL_TABLES

pytestmark = pytest.mark.anyio


async def test_healthz_says_the_database_answers(api):
    response = await api.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": True}


async def test_healthz_is_503_when_the_database_is_gone(api, services, database, postgres):
    from app import db

    await db.close_pool()  # no pool: as when the server cannot be reached
    try:
        response = await api.get("/healthz")
        assert response.status_code == 503 and response.json()["database"] is False
    finally:
        await db.open_pool(max_size=2)


async def test_one_json_log_line_per_request_with_its_request_id(api, caplog):
    from app.log_format import JsonFormatter

    with caplog.at_level(logging.INFO, logger="svc.access"):
        response = await api.get("/healthz", headers={"x-request-id": "trace-1"})
    lines = [JsonFormatter().format(r) for r in caplog.records if r.name == "svc.access"]
    assert len(lines) == 1
    line = json.loads(lines[0])
    assert line["request_id"] == "trace-1" == response.headers["x-request-id"]
    assert line["status"] == 200 and line["path"] == "/healthz"


async def test_tables_match_the_migrated_schema(database):
    connection = await asyncpg.connect(database)
    try:
        for table in ALL_TABLES:
            rows = await connection.fetch(
                "SELECT column_name, is_generated FROM information_schema.columns "
                "WHERE table_name = $1", table._meta.tablename)
            # Generated columns (full-text vectors) live only in the database.
            in_database = {row["column_name"] for row in rows if row["is_generated"] == "NEVER"}
            in_code = {column._meta.db_column_name for column in table._meta.columns}
            assert in_code == in_database, table._meta.tablename
    finally:
        await connection.close()


async def test_openapi_document_is_served(api):
    response = await api.get("/openapi.json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/auth/login" in paths and "/api/admin/settings/{key}" in paths


async def test_the_yaml_document_is_the_json_one(api):
    """Each is written when first asked for, from the one generated document."""
    import yaml

    as_yaml = await api.get("/openapi.yaml")
    assert as_yaml.status_code == 200 and as_yaml.headers["content-type"].startswith("text/yaml")
    assert yaml.safe_load(as_yaml.text) == (await api.get("/openapi.json")).json()


async def test_openapi_documents_json_request_bodies(api):
    paths = (await api.get("/openapi.json")).json()["paths"]
    body = paths["/api/auth/login"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]


class _NoListenAddress:
    async def get(self, key: str) -> str:
        return ""


@pytest.mark.parametrize("serving", [True, False])
async def test_a_serving_listener_collects_on_the_calls_beat_and_gives_collection_back_at_stop(
        serving):
    import gc

    from adapters.voice.collection import CollectionSchedule, NoSchedule
    from adapters.voice.pacing import frame_ticker
    from app.telephony.audio_listener import AudioListener
    from app.telephony.listener_state import ListenerState

    listener = AudioListener(_NoListenAddress(), ListenerState(), None,  # type: ignore[arg-type]
                             collect_on_beat=serving)
    assert gc.get_freeze_count() == 0
    await listener.start()
    try:
        # Made by the listener, held by the loop's ticker every call's player joins.
        schedule = frame_ticker().collection
        assert isinstance(schedule, CollectionSchedule if serving else NoSchedule)
        assert (schedule is listener.collection) is serving
        # The start-up objects are out of the collector's sight.
        assert (gc.get_freeze_count() > 0) is serving
    finally:
        await listener.stop()
    assert isinstance(frame_ticker().collection, NoSchedule)
    assert gc.get_freeze_count() == 0 and gc.isenabled()


async def test_the_notification_events_default_is_the_schemas(database):
    from app.tables import NotifyTarget

    connection = await asyncpg.connect(database)
    try:
        default = await connection.fetchval(
            "SELECT column_default FROM information_schema.columns "
            "WHERE table_name = 'notify_target' AND column_name = 'events'")
        # The schema's own default expression, evaluated by the database.
        in_database = await connection.fetchval(f"SELECT {default}")
    finally:
        await connection.close()
    assert NotifyTarget().events == list(in_database)


async def test_migrating_says_how_many_migrations_ran(postgres, caplog):
    from app import db
    from app.piccolo_migrations import __path__ as folder

    count = sum(1 for name in os.listdir(folder[0]) if name.startswith("svc_"))
    fresh = f"svc_fresh_{os.getpid()}"
    await postgres.drop(fresh)
    db.use_database(await postgres.create_empty(fresh))
    try:
        with caplog.at_level(logging.INFO, logger="svc.db"):
            await db.migrate()
            await db.migrate()
    finally:
        await postgres.drop(fresh)
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert said == [f"migrations: {count} applied now, {count} in all",
                    f"migrations: 0 applied now, {count} in all"]
