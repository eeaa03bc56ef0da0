"""The dispatch benchmark (``benchmarks/v1_dispatch.py``) compares what it says it does:
one application answering through the router, the other through the direct route, with
the same answer."""

from __future__ import annotations

import pytest

from benchmarks.v1_dispatch import SCOPE, _receive, application, measure

pytestmark = pytest.mark.anyio


async def _answer(app) -> tuple[int, bytes]:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    await app(dict(SCOPE), _receive, send)
    return sent[0]["status"], b"".join(message.get("body", b"") for message in sent[1:])


async def test_both_ways_give_the_same_answer_and_only_one_takes_the_direct_route():
    by_router, direct = application(False), application(True)
    for app in (by_router, direct):
        await app.start()
    assert by_router.direct_routes.chain_for(SCOPE) is None
    assert direct.direct_routes.chain_for(SCOPE) is not None
    assert await _answer(by_router) == await _answer(direct) == (
        200, b'{"object":"chat.completion"}')


async def test_a_round_gives_a_figure_for_each_way():
    figures = await measure(requests=20, rounds=2)
    assert set(figures) == {"router", "direct route"}
    assert all(len(values) == 2 and all(v > 0 for v in values) for values in figures.values())
