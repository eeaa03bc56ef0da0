"""Calls whose process is gone, or whose end could not be written, end ``dropped``.

A call in progress counts against ``telephony.max_concurrent_calls`` until it ends. If
the process running it is killed, or its end meets a database that is away, nothing
would end it: with the cap at one, the deployment would refuse every later call. The
call leases (``app.telephony.leases``) end such calls ``dropped``, and the next caller
is taken.
"""

from __future__ import annotations

import secrets
import signal

import aiohttp
import anyio
import httpx
import pytest

from adapters.call_simulator import AwaitHangup, Caller, prepare, ring_carrier
from app.tables import TelephonyCall
from tests.app.serving.rig import VOICE, Rig
from tests.app.serving.test_killed_during_bookings import Served
from tests.app.telephony.deployment import (
    CREDENTIAL,
    LINE_NUMBER,
    PUBLIC,
    carrier_post,
    deployment,
    voice_params,
)
from tests.fakes.coded_speech import CodedRecogniser, CodedSynthesiser
from tests.support.http import running_app
from tests.support.processes import stop_process
from tests.support.settings import set_runtime

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

#: Long enough for any lease to lapse and be swept, several times over.
PATIENCE_S = 90


async def _ring_and_hold(server_url: str, caller_number: str) -> None:
    """A caller who stays on the line until the line goes; a dead server is no fault."""
    caller = Caller(await prepare([AwaitHangup(timeout_s=600)], None))
    async with aiohttp.ClientSession() as http:
        try:
            await ring_carrier(server_url=server_url, public_base=PUBLIC, credential=CREDENTIAL,
                               caller_number=caller_number, dialled=LINE_NUMBER, caller=caller,
                               http=http)
        except aiohttp.ClientError:
            pass  # the status callback after the call finds the server gone


async def _the_call_from(number: str) -> dict | None:
    return await TelephonyCall.select().where(TelephonyCall.from_number == number).first()


async def _until(predicate, what: str) -> dict:
    with anyio.fail_after(PATIENCE_S):
        while not (found := await predicate()):
            await anyio.sleep(0.2)
    assert found, what
    return found


async def _audio_started(number: str) -> dict:
    async def started():
        row = await _the_call_from(number)
        return row if row and row["media_started_at"] is not None else None

    return await _until(started, "the call's audio started")


async def _ended(number: str) -> dict:
    async def ended():
        row = await _the_call_from(number)
        return row if row and row["outcome"] != "in_progress" else None

    return await _until(ended, "the call ended")


def _taken(answer: httpx.Response) -> bool:
    return answer.status_code == 200 and b"<Connect" in answer.content


async def test_a_call_of_a_killed_process_ends_dropped_and_frees_its_place(
        database, services, encryption_key, tmp_path):
    async with running_app(services) as api:
        setup = await deployment(api, services)
        await setup.setting("telephony.max_concurrent_calls", 1)
    first = Served(database, tmp_path / "data", encryption_key)
    try:
        async with anyio.create_task_group() as calls:
            calls.start_soon(_ring_and_hold, first.base, "+447700900101")
            held = await _audio_started("+447700900101")
            first.process.send_signal(signal.SIGKILL)
            assert first.process.wait() == -signal.SIGKILL
    finally:
        stop_process(first.process)
    # Nothing ended it: it still holds the only place.
    assert (await _the_call_from("+447700900101"))["outcome"] == "in_progress"
    assert held["owner_instance"] is not None

    again = Served(database, tmp_path / "data", encryption_key)
    try:
        assert (await _ended("+447700900101"))["outcome"] == "dropped"
        async with httpx.AsyncClient(base_url=again.base, timeout=30) as client:
            answer = await carrier_post(client, VOICE, voice_params(
                caller="+447700900102", call_sid="CA" + secrets.token_hex(8)))
        assert _taken(answer), answer.text
        assert (await _the_call_from("+447700900102"))["outcome"] == "in_progress"
    finally:
        stop_process(again.process)


async def test_a_call_whose_end_met_a_stopped_database_ends_dropped(rig: Rig):
    synthesiser, recogniser = CodedSynthesiser(), CodedRecogniser()

    async def instant_engines():
        from app.telephony.speech_engines import CallEngines

        return CallEngines(synthesiser=synthesiser, recogniser=recogniser)

    rig.services.call_voice.engines = instant_engines
    await set_runtime(rig.services, "telephony.max_concurrent_calls", 1)
    async with anyio.create_task_group() as calls:
        calls.start_soon(_ring_and_hold, str(rig.api.base_url), "+447700900201")
        held = await _audio_started("+447700900201")
        await rig.stop_database()
        calls.cancel_scope.cancel()  # the caller goes; its end cannot be written
    running = rig.services.telephony.leases.running
    with anyio.fail_after(PATIENCE_S):
        while held["id"] in running:  # the server side has met the stopped database
            await anyio.sleep(0.05)
    await rig.start_database()
    assert (await _the_call_from("+447700900201"))["outcome"] == "in_progress"
    erase = f"/api/telephony/calls/{held['id']}/transcript"
    assert (await rig.api.delete(erase, headers=rig.session)).status_code == 409

    assert (await _ended("+447700900201"))["outcome"] == "dropped"
    # Ended, it can be erased like any other call.
    assert (await rig.api.delete(erase, headers=rig.session)).status_code == 200
    assert _taken(await carrier_post(rig.api, VOICE, voice_params(
        caller="+447700900202", call_sid="CA" + secrets.token_hex(8))))
