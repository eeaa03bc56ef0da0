"""The call simulator against a small line built from the service's own machines
(``tests.fakes.telephone_line``): both transports, the script, the report."""

from __future__ import annotations

import wave

import aiohttp
import pytest

from adapters.call_simulator import (
    FutureEvent,
    Press,
    AwaitHangup,
    Caller,
    Listen,
    Pause,
    Play,
    Say,
    prepare,
    read_wav,
    ring_carrier,
    ring_pbx,
    transcribe,
    write_wav,
)
from adapters.call_simulator.audio import (
    active_level_dbfs,
    at_telephone_level,
    audible,
    frames_of,
)
from adapters.call_simulator.carrier import read_instruction, relay
from tests.fakes.telephone_line import CREDENTIAL, SECRET, TRANSFER, Behaviour, running_fake_line, tone

pytestmark = pytest.mark.anyio


class ToneSynthesiser:
    """Speaks any text as a tone 40 ms per character, at 16 kHz."""

    sample_rate = 16000

    async def stream(self, text: str):
        from kernels.resample import resample

        yield resample(tone(40 * len(text)), 8000, 16000)


class LengthRecogniser:
    """Hears how much speech there is: 20 ms for every audible frame."""

    async def transcribe(self, pcm16: bytes, sample_rate: int) -> str:
        return f"{20 * sum(map(audible, frames_of(pcm16)))} ms"


async def ring(transport: str, line, steps, **kwargs):
    caller = Caller(await prepare(steps, ToneSynthesiser()))
    async with aiohttp.ClientSession() as http:
        if transport == "pbx":
            return await ring_pbx(server_url=line.http_url, audiosocket=line.audiosocket,
                                  secret=kwargs.get("secret", SECRET),
                                  caller_number="+441632960777", dialled="+441632960001",
                                  caller=caller, http=http, rate=kwargs.get("rate", 8000))
        return await ring_carrier(server_url=line.http_url, public_base=line.base_url,
                                  credential=kwargs.get("credential", CREDENTIAL),
                                  caller_number="+441632960777", dialled="+441632960001",
                                  caller=caller, http=http)


@pytest.mark.parametrize("transport", ["pbx", "carrier"])
async def test_a_call_hears_the_opening_and_the_reply_and_measures_the_wait(transport):
    async with running_fake_line(Behaviour(opening_ms=600, reply_ms=400, transfer=True)) as line:
        report = await ring(transport, line, [Listen(quiet_ms=400, timeout_s=5),
                                              Say("hello there"), AwaitHangup(timeout_s=5)])
    assert report.answered and report.ended_by == "line", report
    await transcribe(report, LengthRecogniser())
    assert [reply.transcript for reply in report.replies] == ["600 ms", "400 ms"]
    assert report.transfer_to == TRANSFER
    assert [timing.turn for timing in report.timings] == ["hello there"]
    assert report.timings[0].first_reply_s > report.timings[0].speech_ended_s
    assert report.odd_frames == 0 and report.frames_received > 0
    heard_frames = frames_of(report.heard)
    assert sum(map(audible, heard_frames)) == 50  # 600 ms + 400 ms of tone, nothing else


async def test_the_carrier_side_returns_marks_and_posts_continue_then_the_final_status():
    async with running_fake_line(Behaviour(transfer=False)) as line:
        report = await ring("carrier", line, [Listen(quiet_ms=400, timeout_s=5),
                                              Say("hello there"), AwaitHangup(timeout_s=5)])
    assert report.transfer_to is None
    assert ("opening", True) in line.marks
    assert [name for name, _ in line.webhooks] == ["voice", "continue", "status"]
    assert line.webhooks[-1] == ("status", "completed")


@pytest.mark.parametrize("transport", ["pbx", "carrier"])
async def test_the_caller_hanging_up_ends_the_call_from_the_callers_side(transport):
    async with running_fake_line(Behaviour(opening_ms=2000)) as line:
        report = await ring(transport, line, [Pause(ms=300)])
    assert report.ended_by == "caller"
    assert report.transfer_to is None
    assert 0 < len(report.replies) <= 1


async def test_a_frame_kind_asterisk_does_not_accept_drops_the_call_without_a_word():
    async with running_fake_line(Behaviour(opening_ms=200, bad_kind=0x03)) as line:
        report = await ring("pbx", line, [Listen(quiet_ms=1500, timeout_s=5)])
    assert report.ended_by == "fault"
    assert "DTMF" in report.fault
    assert line.closed_after_fault and line.errors_received == []  # it never sends 0xff


async def test_asterisk_hangs_up_on_a_line_that_sends_no_audio_for_two_seconds():
    # The fake line says its opening, then waits for a turn without sending anything.
    async with running_fake_line(Behaviour(opening_ms=200, quiet_pbx=True)) as line:
        report = await ring("pbx", line, [Listen(quiet_ms=4000, timeout_s=6)])
    assert report.ended_by == "inactivity"
    assert "2000 ms" in report.fault


async def test_asterisk_at_slin16_sends_and_expects_kind_0x12():
    async with running_fake_line(Behaviour(opening_ms=600, reply_ms=400)) as line:
        report = await ring("pbx", line, [Listen(quiet_ms=400, timeout_s=5),
                                          Say("hello there"), AwaitHangup(timeout_s=5)],
                            rate=16000)
    assert report.ended_by == "line", report
    assert report.rates == {16000} and report.odd_frames == 0
    await transcribe(report, LengthRecogniser())
    # Resampled twice (8 -> 16 -> 8 kHz): the filters' delay may spill a frame over.
    heard = [int(reply.transcript.split()[0]) for reply in report.replies]
    assert 600 <= heard[0] <= 620 and 400 <= heard[1] <= 420, heard


async def test_the_carrier_sends_keys_and_events_of_a_later_version_of_its_stream():
    async with running_fake_line(Behaviour(opening_ms=300, reply_ms=300)) as line:
        report = await ring("carrier", line, [Listen(quiet_ms=400, timeout_s=5),
                                              FutureEvent(), Press("5"), Say("hello there"),
                                              AwaitHangup(timeout_s=5)])
    assert report.ended_by == "line", report  # the unknown event ended nothing
    assert line.keys == ["5"] and line.ignored == ["unknown event 'heartbeat'"]


@pytest.mark.parametrize("transport", ["pbx", "carrier"])
async def test_a_refused_call_is_reported_as_refused(transport):
    async with running_fake_line() as line:
        report = await ring(transport, line, [Listen()], secret="wrong", credential="wrong")
    assert not report.answered and report.ended_by == "refused"


def test_the_caller_is_played_at_a_telephone_level_with_noise_at_the_asked_snr():
    speech = tone(1000, level=0.5) + bytes(16000)  # a second of speech, one of quiet
    assert active_level_dbfs(speech) == pytest.approx(-9.0, abs=0.2)
    line = at_telephone_level(speech, -26.0, 20.0)
    assert active_level_dbfs(line[:16000]) == pytest.approx(-26.0, abs=0.2)
    assert active_level_dbfs(line[16000:]) == pytest.approx(-46.0, abs=0.5)  # noise
    assert at_telephone_level(speech, -26.0, 20.0) == line  # repeatable
    assert at_telephone_level(speech) == speech


def test_wav_files_round_trip_at_the_call_rate(tmp_path):
    pcm = tone(100)
    write_wav(tmp_path / "a.wav", pcm)
    assert read_wav(tmp_path / "a.wav") == pcm
    with wave.open(str(tmp_path / "b.wav"), "wb") as stereo:
        stereo.setnchannels(2)
        stereo.setsampwidth(2)
        stereo.setframerate(16000)
        stereo.writeframes(b"\x10\x00\x30\x00" * 1600)
    assert len(read_wav(tmp_path / "b.wav")) == 1600  # 0.1 s at 8 kHz


def test_twiml_answers_are_read_and_public_addresses_relayed():
    from core import twiml

    connect = read_instruction(twiml.connect_stream("https://p.example/x/continue",
                                                    "wss://p.example/x/media", {"ticket": "t"}))
    assert (connect.verb, connect.action, connect.parameters) == (
        "Connect", "https://p.example/x/continue", {"ticket": "t"})
    assert read_instruction(twiml.dial("+441632960999")).number == "+441632960999"
    assert read_instruction(twiml.reject()).verb == "Reject"
    with pytest.raises(ValueError):
        read_instruction(b"<html/>")
    assert relay("wss://p.example/x/media", "https://p.example/x",
                 "http://127.0.0.1:9") == "ws://127.0.0.1:9/media"
    assert relay("https://p.example/x/continue", "https://p.example/x",
                 "http://127.0.0.1:9") == "http://127.0.0.1:9/continue"


async def test_a_script_that_plays_audio_without_a_synthesiser_needs_none():
    steps = await prepare([Play(tone(40)), Listen()], None)
    assert isinstance(steps[0], Play)
    with pytest.raises(ValueError):
        await prepare([Say("x")], None)


def walk(caller: Caller, heard: list[bool], frames: int):
    """What the caller does frame by frame, given what it hears in each frame."""
    done = []
    for index in range(frames):
        action, frame = caller.next_frame(index * 0.02, heard[index] if index < len(heard)
                                          else False)
        done.append(action.value)
        if action.value == "hang_up":
            break
    return done


def test_listening_waits_for_the_line_to_speak_and_then_fall_quiet():
    from adapters.call_simulator.script import Action

    caller = Caller([Listen(quiet_ms=100, timeout_s=10)])
    heard = [False] * 10 + [True] * 5 + [False] * 20
    done = walk(caller, heard, 40)
    # 10 frames before the line speaks, 5 while it speaks, then 100 ms of quiet counted
    # from the first quiet frame (heard[15]), then hang up.
    assert done.count(Action.AUDIO.value) == 19 and done[-1] == "hang_up"


def test_a_listen_gives_up_after_its_timeout_and_a_key_is_pressed_once():
    from adapters.call_simulator import GoSilent, Press

    caller = Caller([Listen(quiet_ms=100, timeout_s=0.1), Press("5"), GoSilent(timeout_s=0.1)])
    done = walk(caller, [], 40)
    assert done == ["audio"] * 5 + ["key"] + ["nothing"] * 5 + ["hang_up"]
    assert caller.digit == "5"


def test_a_turn_ends_when_its_last_frame_is_sent():
    caller = Caller([Play(tone(100), label="hi")])
    walk(caller, [], 10)
    assert [(t.label, round(t.started_s, 2), round(t.ended_s, 2)) for t in caller.turns] == [
        ("hi", 0.0, 0.08)]


async def test_a_report_reads_as_text():
    from adapters.call_simulator.summary import describe

    async with running_fake_line(Behaviour(opening_ms=300, reply_ms=300)) as line:
        report = await ring("pbx", line, [Listen(quiet_ms=300, timeout_s=5), Say("hello there"),
                                          AwaitHangup(timeout_s=5)])
    await transcribe(report, LengthRecogniser())
    text = describe(report)
    assert "the line ended the call" in text
    assert '"300 ms"' in text and 'caller' in text and '"hello there"' in text
    assert "no transfer" in text
