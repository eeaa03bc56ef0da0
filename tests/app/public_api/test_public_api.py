"""The /v1 API driven by the official openai SDK, plus raw HTTP for headers and CORS."""

import asyncio
import contextlib
import datetime as dt
import time

import anyio
import httpx
import openai
import pytest

from app.tables import ApiKey, UsageEvent
from core import ratelimit
from tests.fakes.upstream import Behaviour
from tests.support.usage import usage_recorded

pytestmark = pytest.mark.anyio


async def test_a_minted_key_is_shown_once_and_stored_only_as_a_fingerprint(v1):
    listed = (await v1.api.get("/api/profile/api-keys", headers=v1.user)).json()["data"]
    assert len(listed) == 1 and "key" not in listed[0]
    assert v1.key.startswith(listed[0]["prefix"]) and v1.key not in str(listed)
    row = await ApiKey.select().first()
    assert v1.key not in str(row.values())


async def test_models_lists_provider_models_local_and_reachable_agents(v1):
    agent = (await v1.api.post("/api/agents", headers=v1.user,
                               json={"name": "Desk", "model": "local"})).json()
    models = [m.id for m in (await v1.sdk.models.list()).data]
    assert {"fake-small", "local", f"agent/{agent['id']}"} <= set(models)
    retrieved = await v1.sdk.models.retrieve(f"agent/{agent['id']}")
    assert retrieved.id == f"agent/{agent['id']}" and isinstance(retrieved.created, int)
    with pytest.raises(openai.NotFoundError):
        await v1.sdk.models.retrieve("agent/00000000-0000-0000-0000-000000000000")


async def test_passthrough_forwards_messages_and_unknown_parameters(v1):
    answer = await v1.sdk.chat.completions.create(
        model="fake-small", messages=[{"role": "developer", "content": "Be brief."},
                                      {"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
        seed=7, user="u-1", metadata={"a": "b"}, max_completion_tokens=20)
    assert answer.choices[0].message.content == Behaviour().text
    sent = v1.upstream.requests[-1]
    assert sent.json["seed"] == 7 and sent.json["user"] == "u-1"
    assert sent.json["messages"][1]["content"] == [{"type": "text", "text": "Hi"}]
    assert sent.headers["authorization"] == "Bearer instance-key"


async def test_streamed_and_unstreamed_give_the_same_text_and_usage_when_asked(v1):
    plain = await v1.sdk.chat.completions.create(
        model="fake-small", messages=[{"role": "user", "content": "Hello"}])
    stream = await v1.sdk.chat.completions.create(
        model="fake-small", messages=[{"role": "user", "content": "Hello"}], stream=True,
        stream_options={"include_usage": True})
    pieces, usage = [], None
    async for chunk in stream:
        if chunk.choices:
            pieces.append(chunk.choices[0].delta.content or "")
        if chunk.usage:
            usage = chunk.usage
    assert "".join(pieces) == plain.choices[0].message.content
    assert usage is not None and usage.completion_tokens > 0


@pytest.mark.parametrize("name", ["n", "best_of"])
async def test_more_than_one_completion_is_refused_naming_the_count(v1, name):
    with pytest.raises(openai.BadRequestError) as refused:
        await v1.sdk.chat.completions.create(model="fake-small", extra_body={name: 2},
                                             messages=[{"role": "user", "content": "x"}])
    assert refused.value.param == name
    assert v1.upstream.requests == []
    one = await v1.sdk.chat.completions.create(model="fake-small", extra_body={name: 1},
                                               messages=[{"role": "user", "content": "x"}])
    assert one.choices[0].message.content


async def test_client_tools_are_refused_with_the_setting_to_turn_off(v1):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    with pytest.raises(openai.BadRequestError) as refused:
        await v1.sdk.chat.completions.create(model="fake-small", tools=tools,
                                             messages=[{"role": "user", "content": "x"}])
    assert refused.value.code == "tools_not_allowed" and "settings" in refused.value.message
    fine = await v1.api.post("/v1/chat/completions", headers={"Authorization": f"Bearer {v1.key}"},
                             json={"model": "fake-small", "tools": [],
                                   "messages": [{"role": "user", "content": "x"}]})
    assert fine.status_code == 200


async def test_unknown_model_is_404_model_not_found(v1):
    with pytest.raises(openai.NotFoundError) as refused:
        await v1.sdk.chat.completions.create(model="nope",
                                             messages=[{"role": "user", "content": "x"}])
    assert refused.value.code == "model_not_found"


async def test_missing_unknown_revoked_and_expired_keys_are_401(v1):
    for headers in ({}, {"Authorization": "Bearer sk-svc-unknown-unknown-unknown"}):
        response = await v1.api.get("/v1/models", headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "invalid_api_key"
        assert set(response.json()["error"]) == {"message", "type", "param", "code"}
    key_id = (await v1.api.get("/api/profile/api-keys", headers=v1.user)).json()["data"][0]["id"]
    await ApiKey.update({ApiKey.expires_at: dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)}
                        ).where(ApiKey.id == key_id)
    with pytest.raises(openai.AuthenticationError) as expired:
        await v1.sdk.models.list()
    assert v1.key not in expired.value.message
    await ApiKey.update({ApiKey.expires_at: None}).where(ApiKey.id == key_id)
    await v1.sdk.models.list()
    await v1.api.delete(f"/api/profile/api-keys/{key_id}", headers=v1.user)
    with pytest.raises(openai.AuthenticationError):
        await v1.sdk.models.list()


async def test_an_administrator_sees_and_revokes_keys_but_never_reads_them(v1):
    admin = await v1.api.as_new_user(v1.services, "root@example.org", role="admin")
    me = (await v1.api.get("/api/me", headers=v1.user)).json()
    keys = await v1.api.get(f"/api/admin/users/{me['id']}/api-keys", headers=admin)
    assert len(keys.json()["data"]) == 1 and v1.key not in keys.text
    other = await v1.api.as_new_user(v1.services, "other@example.org")
    key_id = keys.json()["data"][0]["id"]
    assert (await v1.api.delete(f"/api/profile/api-keys/{key_id}", headers=other)).status_code == 404
    revoked = await v1.api.delete(f"/api/admin/api-keys/{key_id}", headers=admin)
    assert revoked.json()["state"] == "revoked"
    with pytest.raises(openai.AuthenticationError):
        await v1.sdk.models.list()


async def test_the_rate_limit_answers_429_and_refusals_do_not_use_the_quota(v1):
    root = await v1.api.as_new_user(v1.services, "root@example.org", role="superadmin")
    await v1.api.put("/api/admin/settings/api.rate_per_min", headers=root, json={"value": 3})
    v1.services.api_keys.clock = lambda: 1_800_000_000.0  # time stands still
    headers = {"Authorization": f"Bearer {v1.key}"}
    bad = {"model": "fake-small", "n": 3, "messages": [{"role": "user", "content": "x"}]}
    for _ in range(5):
        assert (await v1.api.post("/v1/chat/completions", headers=headers, json=bad)).status_code == 400
    good = {"model": "fake-small", "messages": [{"role": "user", "content": "x"}]}
    answers = [await v1.api.post("/v1/chat/completions", headers=headers, json=good)
               for _ in range(4)]
    assert [a.status_code for a in answers[:3]] == [200, 200, 200]
    assert answers[0].headers["x-ratelimit-remaining-requests"] == "2"
    refused = answers[3]
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limit_exceeded"
    # A request is earned back every 20 s: exactly that long to wait, and the whole
    # minute back 60 s after the three went.
    assert (refused.headers["retry-after"], refused.headers["retry-after-ms"]) == ("20", "20000")
    assert refused.headers["x-ratelimit-reset-requests"] == "1m0s"
    assert refused.headers["x-ratelimit-limit-requests"] == "3"


async def test_upstream_failures_are_502_and_504(v1):
    v1.upstream.behaviour = Behaviour(status=500)
    with pytest.raises(openai.InternalServerError) as failed:
        await v1.sdk.chat.completions.create(model="fake-small",
                                             messages=[{"role": "user", "content": "x"}])
    assert failed.value.status_code == 502
    v1.services.client.timeouts = type(v1.services.client.timeouts)(connect=2, read=0.3)
    v1.upstream.behaviour = Behaviour(first_byte_delay=2)
    with pytest.raises(openai.InternalServerError) as slow:
        await v1.sdk.chat.completions.create(model="fake-small",
                                             messages=[{"role": "user", "content": "x"}])
    assert slow.value.status_code == 504


async def test_a_client_leaving_mid_stream_cancels_the_upstream_and_is_counted(v1):
    v1.upstream.behaviour = Behaviour(chunks=50, chunk_delay=0.05)
    async with httpx.AsyncClient(base_url=v1.api.base_url, timeout=10) as client:
        async with client.stream("POST", "/v1/chat/completions",
                                 headers={"Authorization": f"Bearer {v1.key}"},
                                 json={"model": "fake-small", "stream": True,
                                       "messages": [{"role": "user", "content": "x"}]}) as r:
            async for _ in r.aiter_bytes():
                break
    await v1.upstream.wait_open_connections(0)
    await usage_recorded(v1.services)
    rows = await UsageEvent.select(UsageEvent.outcome, UsageEvent.api_key_id)
    assert rows[0]["outcome"] == "client_disconnected" and rows[0]["api_key_id"] is not None


async def test_switching_the_api_off_hides_v1_and_key_management(v1):
    root = await v1.api.as_new_user(v1.services, "root@example.org", role="superadmin")
    await v1.api.put("/api/admin/settings/features.public_api", headers=root, json={"value": False})
    assert (await v1.api.get("/v1/models", headers={"Authorization": f"Bearer {v1.key}"})
            ).status_code == 404
    assert (await v1.api.get("/api/profile/api-keys", headers=v1.user)).status_code == 404
    assert (await v1.api.post("/api/profile/api-keys", headers=v1.user, json={"name": "x"})
            ).status_code == 404


async def test_cors_only_when_switched_on(v1):
    preflight = {"Origin": "https://tool.example", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization, content-type, x-stainless-os"}
    off = await v1.api.options("/v1/chat/completions", headers=preflight)
    assert "access-control-allow-origin" not in off.headers
    root = await v1.api.as_new_user(v1.services, "root@example.org", role="superadmin")
    await v1.api.put("/api/admin/settings/api.cors_allow_all", headers=root, json={"value": True})
    on = await v1.api.options("/v1/chat/completions", headers=preflight)
    assert on.status_code == 204
    assert on.headers["access-control-allow-origin"] == "https://tool.example"
    assert on.headers["access-control-allow-headers"] == preflight["Access-Control-Request-Headers"]
    answer = await v1.api.get("/v1/models", headers={"Authorization": f"Bearer {v1.key}",
                                                     "Origin": "https://tool.example"})
    assert "X-Service-Chat-Id" in answer.headers["access-control-expose-headers"]
    assert "x-ratelimit-remaining-requests" in answer.headers["access-control-expose-headers"]
    refused = await v1.api.get("/v1/models", headers={"Origin": "https://tool.example"})
    assert refused.status_code == 401 and refused.headers["access-control-allow-origin"]


async def test_every_response_has_a_request_id_and_errors_have_the_openai_shape(v1):
    for response in (await v1.api.get("/v1/models"), await v1.api.get("/v1/nothing-here"),
                     await v1.api.post("/v1/chat/completions", content=b"{",
                                       headers={"Authorization": f"Bearer {v1.key}",
                                                "Content-Type": "application/json"})):
        assert response.headers["x-request-id"]
        assert set(response.json()["error"]) == {"message", "type", "param", "code"}


async def test_usage_is_recorded_per_key_next_to_app_usage(v1):
    await v1.sdk.chat.completions.create(model="fake-small",
                                         messages=[{"role": "user", "content": "x"}])
    await v1.services.usage.drain()
    admin = await v1.api.as_new_user(v1.services, "root@example.org", role="admin")
    totals = (await v1.api.get("/api/admin/usage", headers=admin)).json()
    assert totals["by_source"][0]["bucket"] == "api"
    by_key = totals["by_key"][0]
    assert by_key["bucket"] is not None and by_key["requests"] == 1
    assert (by_key["key_name"], by_key["owner_email"]) == ("laptop", "dev@example.org")
    assert v1.key.startswith(by_key["key_prefix"]) and v1.key not in str(totals)


async def test_a_stream_whose_client_did_not_ask_for_usage_still_counts_its_tokens(v1):
    stream = await v1.sdk.chat.completions.create(
        model="fake-small", messages=[{"role": "user", "content": "x"}], stream=True)
    chunks = [chunk async for chunk in stream]
    assert all(chunk.choices and chunk.usage is None for chunk in chunks)
    await v1.services.usage.drain()
    [row] = await UsageEvent.select().where(UsageEvent.source == "api")
    assert row["completion_tokens"] > 0 and row["prompt_tokens"] > 0


async def test_a_body_over_the_limit_is_413_in_the_openai_shape(v1, monkeypatch):
    from app.routes import v1 as v1_routes

    monkeypatch.setattr(v1_routes, "API_MAX_BODY_BYTES", 1000)
    response = await v1.api.post("/v1/chat/completions", headers={
        "Authorization": f"Bearer {v1.key}"}, json={
        "model": "fake-small", "messages": [{"role": "user", "content": "x" * 2000}]})
    assert response.status_code == 413 and response.headers["x-request-id"]
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}
    assert v1.upstream.requests == []


async def test_a_json_body_sent_as_curl_sends_it_by_default_is_read(v1):
    response = await v1.api.post("/v1/chat/completions", headers={
        "Authorization": f"Bearer {v1.key}",
        "Content-Type": "application/x-www-form-urlencoded"},
        content=b'{"model": "fake-small", "messages": [{"role": "user", "content": "x"}]}')
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == Behaviour().text


async def test_a_busy_key_never_passes_its_limit_across_processes(v1):
    from app.services.api_keys import ApiKeys

    key_id = (await ApiKey.select(ApiKey.id).first())["id"]
    processes = [v1.services.api_keys, ApiKeys(v1.services.audit, v1.services.auth_changes)]  # two servers' views
    limit = 300  # leases of three permits
    for process in processes:
        process.clock = lambda: 1_800_000_000.0  # the burst takes no time at all

    async def one(index: int):
        return await processes[index % 2].consume(key_id, limit)

    async with anyio.create_task_group() as tasks:
        decisions = []

        async def run(index):
            decisions.append(await one(index))

        for index in range(400):
            tasks.start_soon(run, index)
    admitted = sum(d.allowed for d in decisions)
    # Never more than the limit; early refusals at most what the other process holds.
    assert limit - ratelimit.lease_size(limit) <= admitted <= limit
    assert all(0 <= d.remaining <= limit for d in decisions)


async def test_a_busy_keys_next_permits_are_claimed_before_its_lease_runs_out(v1, monkeypatch):
    from app import db

    key_id = (await ApiKey.select(ApiKey.id).first())["id"]
    keys = v1.services.api_keys
    keys.clock = lambda: 1_800_000_000.0
    limit = 1000  # leases of ten permits
    claimed = []
    database = db.fast_connection

    @contextlib.asynccontextmanager
    async def counted():
        async with database() as connection:
            yield connection
        claimed.append(1)

    monkeypatch.setattr(db, "fast_connection", counted)
    assert all([(await keys.consume(key_id, limit)).allowed for _ in range(8)])
    # The next ten were claimed in the background once half of the first were spent.
    with anyio.fail_after(10):
        while len(claimed) < 2:
            await anyio.sleep(0.01)

    def unreachable():
        raise OSError("the database is out of reach")

    monkeypatch.setattr(db, "fast_connection", unreachable)
    # The two left and the ten claimed ahead pass without the database...
    decisions = [await keys.consume(key_id, limit) for _ in range(12)]
    assert all(decision.allowed for decision in decisions)
    assert [d.remaining for d in decisions] == sorted((d.remaining for d in decisions),
                                                      reverse=True)
    # ...and the request after them needs it again.
    with pytest.raises(OSError):
        await keys.consume(key_id, limit)


async def test_requests_waiting_on_a_claim_share_its_outcome(v1, monkeypatch):
    from app import db

    key_id = (await ApiKey.select(ApiKey.id).first())["id"]
    keys = v1.services.api_keys
    keys.clock = lambda: 1_800_000_000.0
    claims = []
    database = db.fast_connection

    def counted():
        claims.append(1)
        return database()

    monkeypatch.setattr(db, "fast_connection", counted)
    decisions = []

    async def one():
        decisions.append(await keys.consume(key_id, 6))  # leases of one permit

    async with anyio.create_task_group() as tasks:
        for _ in range(20):
            tasks.start_soon(one)
    assert sum(decision.allowed for decision in decisions) == 6
    # One claim per permit, and the one that found none refused all fourteen others.
    assert len(claims) == 7
    assert len({decision.retry_micros for decision in decisions if not decision.allowed}) == 1


async def test_requests_arriving_as_a_claim_ends_claim_again_when_its_permits_are_gone(
        v1, monkeypatch):
    from app import db

    key_id = (await ApiKey.select(ApiKey.id).first())["id"]
    keys = v1.services.api_keys
    keys.clock = lambda: 1_800_000_000.0
    database = db.fast_connection
    arriving: list[asyncio.Task] = []

    @contextlib.asynccontextmanager
    async def two_more_arrive_as_it_ends():
        async with database() as connection:
            yield connection
        if not arriving:  # queued before the claim's task has ended and been let go of
            loop = asyncio.get_running_loop()
            arriving.extend(loop.create_task(keys.consume(key_id, 6)) for _ in range(2))

    monkeypatch.setattr(db, "fast_connection", two_more_arrive_as_it_ends)
    first = await keys.consume(key_id, 6)  # a lease of one permit, spent by this request
    with anyio.fail_after(30):
        later = await asyncio.gather(*arriving)
    assert first.allowed and [decision.allowed for decision in later] == [True, True]


async def test_a_raised_limit_is_not_refused_by_a_claim_made_under_the_old_one(
        v1, monkeypatch):
    from app import db

    key_id = (await ApiKey.select(ApiKey.id).first())["id"]
    keys = v1.services.api_keys
    now = [1_800_000_000.0]
    keys.clock = lambda: now[0]
    assert all([(await keys.consume(key_id, 60)).allowed for _ in range(60)])
    now[0] += 0.5  # half a second: not one more at 60 a minute, fifty at 6,000
    database = db.fast_connection
    raised: list[asyncio.Task] = []

    def raised_meanwhile():
        if not raised:  # the limit is raised while the claim under 60 is on its way
            raised.append(asyncio.get_running_loop().create_task(keys.consume(key_id, 6000)))
        return database()

    monkeypatch.setattr(db, "fast_connection", raised_meanwhile)
    assert not (await keys.consume(key_id, 60)).allowed
    with anyio.fail_after(30):
        assert (await raised[0]).allowed


async def test_the_limit_has_no_window_edge_and_earns_requests_back_one_by_one(v1):
    from app.services.api_keys import ApiKeys

    key_id = (await ApiKey.select(ApiKey.id).first())["id"]
    now = [1_800_000_059.0]  # a second before a clock minute ends
    processes = [v1.services.api_keys, ApiKeys(v1.services.audit, v1.services.auth_changes)]
    for process in processes:
        process.clock = lambda: now[0]

    async def burst(count: int) -> list[bool]:
        return [(await processes[i % 2].consume(key_id, 6)).allowed for i in range(count)]

    assert await burst(8) == [True] * 6 + [False] * 2
    now[0] += 1.5  # a new clock minute: the fixed window let six more through here
    refused = await processes[0].consume(key_id, 6)
    assert not refused.allowed and refused.retry_micros == 8_500_000
    now[0] += 8.5  # one interval (10 s) after the burst: one request, and only one
    assert await burst(3) == [True, False, False]
    now[0] += 60  # a quiet minute saves up the whole limit again, and no more
    assert await burst(8) == [True] * 6 + [False] * 2


async def test_a_refusal_counts_its_wait_from_when_it_is_refused(v1):
    from app.services.api_keys import ApiKeys

    key_id = (await ApiKey.select(ApiKey.id).first())["id"]
    first, other = v1.services.api_keys, ApiKeys(v1.services.audit, v1.services.auth_changes)
    first.clock = lambda: 1_800_000_000.002  # spends the minute 2 ms after...
    readings = iter([1_800_000_000.0, 1_800_000_000.003])
    other.clock = lambda: next(readings)  # ...this request arrived, and before it is judged
    assert all([(await first.consume(key_id, 6)).allowed for _ in range(6)])
    refused = await other.consume(key_id, 6)
    # The next request passes 10 s after the first of the six: 9.999 s from the refusal.
    assert not refused.allowed and refused.retry_micros == 9_999_000


async def test_a_client_leaving_before_a_whole_passthrough_answer_cancels_it(v1):
    v1.upstream.behaviour = Behaviour(first_byte_delay=30)
    async with httpx.AsyncClient(base_url=v1.api.base_url,
                                 timeout=httpx.Timeout(10, read=0.5)) as client:
        with pytest.raises(httpx.ReadTimeout):  # the client gives up and hangs up
            await client.post("/v1/chat/completions", headers={
                "Authorization": f"Bearer {v1.key}"}, json={
                "model": "fake-small", "messages": [{"role": "user", "content": "x"}]})
    with anyio.fail_after(10):
        await v1.upstream.wait_open_connections(0)
    await usage_recorded(v1.services)
    assert await UsageEvent.select(UsageEvent.outcome) == [{"outcome": "client_disconnected"}]


async def test_passthrough_uses_the_callers_own_provider_key_when_stored(v1):
    providers = (await v1.api.get("/api/admin/providers", headers=await v1.api.as_new_user(
        v1.services, "root@example.org", role="admin"))).json()["data"]
    stored = await v1.api.post("/api/profile/provider-keys", headers=v1.user, json={
        "provider_id": providers[0]["id"], "api_key": "devs-own-key"})
    assert stored.status_code == 201, stored.text
    await v1.sdk.chat.completions.create(model="fake-small",
                                         messages=[{"role": "user", "content": "x"}])
    assert v1.upstream.requests[-1].headers["authorization"] == "Bearer devs-own-key"
