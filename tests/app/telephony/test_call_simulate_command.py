"""``svc call simulate`` from a terminal, against a line built from the service's own
machines (``tests.fakes.telephone_line``)."""

from __future__ import annotations

import contextlib

import pytest
import soundfile
from anyio.from_thread import start_blocking_portal

from adapters.call_simulator import write_wav
from app.cli import main
from tests.fakes.telephone_line import CREDENTIAL, SECRET, TRANSFER, Behaviour, running_fake_line, tone


@contextlib.contextmanager
def fake_line(behaviour: Behaviour):
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(running_fake_line(behaviour)) as line:
            yield line


@pytest.mark.parametrize("via", ["pbx", "carrier"])
def test_a_played_wav_is_answered_and_what_the_line_said_is_saved(via, tmp_path, capsys):
    write_wav(tmp_path / "question.wav", tone(600))
    with fake_line(Behaviour(opening_ms=400, reply_ms=600, transfer=True)) as line:
        transport = (["--audiosocket", "%s:%d" % line.audiosocket, "--secret", SECRET]
                     if via == "pbx" else
                     ["--credential", CREDENTIAL, "--public-url", line.base_url])
        code = main(["call", "simulate", "--via", via, "--to", "+441632960001",
                     "--server", line.http_url, *transport,
                     "--play", str(tmp_path / "question.wav"), "--quiet-ms", "500",
                     "--listen-secs", "5", "--save", str(tmp_path / "heard.wav"),
                     "--no-transcript"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "the line ended the call" in out
    assert 'reply after' in out and 'end of "question.wav"' in out
    assert f"transfer to {TRANSFER}" in out
    heard, rate = soundfile.read(tmp_path / "heard.wav", dtype="int16")
    assert rate == 8000 and heard.ndim == 1 and len(heard) >= 8 * (400 + 600)


def test_asterisk_at_slin16_with_keys_and_a_noisy_quiet_caller(tmp_path, capsys):
    write_wav(tmp_path / "question.wav", tone(600))
    with fake_line(Behaviour(opening_ms=400, reply_ms=600)) as line:
        code = main(["call", "simulate", "--via", "pbx", "--to", "+441632960001",
                     "--server", line.http_url, "--audiosocket", "%s:%d" % line.audiosocket,
                     "--secret", SECRET, "--rate", "16000",
                     "--play", str(tmp_path / "question.wav"), "--press", "12#",
                     "--level-dbfs", "-20",
                     "--noise-snr", "30", "--quiet-ms", "500", "--listen-secs", "5",
                     "--no-transcript"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "the line ended the call" in out and 'end of "question.wav"' in out


def test_a_refused_call_exits_1_and_says_so(tmp_path, capsys):
    with fake_line(Behaviour()) as line:
        code = main(["call", "simulate", "--via", "pbx", "--to", "+441632960001",
                     "--server", line.http_url, "--audiosocket", "%s:%d" % line.audiosocket,
                     "--secret", "wrong", "--no-transcript"])
    assert code == 1
    assert "the call was not answered" in capsys.readouterr().out


@pytest.mark.parametrize("arguments, complaint", [
    (["--via", "pbx", "--secret", "s"], "--audiosocket HOST:PORT"),
    (["--via", "pbx", "--audiosocket", "127.0.0.1:9"], "--secret"),
    (["--via", "carrier"], "--credential"),
    (["--via", "carrier", "--credential", "c", "--rate", "16000"], "--rate"),
])
def test_missing_transport_details_are_named(arguments, complaint, capsys):
    assert main(["call", "simulate", "--to", "+441632960001", *arguments]) == 64
    assert complaint in capsys.readouterr().err


def test_a_wav_that_cannot_be_played_is_bad_input(tmp_path, capsys):
    (tmp_path / "notes.wav").write_text("not audio")
    code = main(["call", "simulate", "--via", "pbx", "--to", "+441632960001",
                 "--audiosocket", "127.0.0.1:9", "--secret", "s",
                 "--play", str(tmp_path / "notes.wav")])
    assert code == 65 and "not a readable WAV file" in capsys.readouterr().err


def test_text_is_said_with_the_local_synthesiser(tmp_path, capsys):
    pytest.importorskip("espeakng_loader")
    with fake_line(Behaviour(opening_ms=300, reply_ms=300)) as line:
        code = main(["call", "simulate", "--via", "pbx", "--to", "+441632960001",
                     "--server", line.http_url, "--audiosocket", "%s:%d" % line.audiosocket,
                     "--secret", SECRET, "--say", "What are your opening hours on Monday?",
                     "--quiet-ms", "500", "--listen-secs", "5", "--no-transcript"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert 'caller' in out and '"What are your opening hours on Monday?"' in out
    # The line heard the speech as speech: it answered it.
    assert line.caller_frames and sum(row.startswith("line ") for row in out.splitlines()) == 2


@pytest.mark.parametrize("given, voice", [([], "en-us+f2"), (["--voice", "en-gb"], "en-gb")])
def test_the_caller_speaks_in_its_own_voice(given, voice, monkeypatch, capsys):
    from adapters.speech import SpeechUnavailable, local

    asked = []

    class Refusing:
        sample_rate = 16000

        def __init__(self, voice: str) -> None:
            asked.append(voice)

        async def stream(self, text):
            raise SpeechUnavailable("is switched off here", engine="test")
            yield b""

    monkeypatch.setattr(local, "LocalSynthesiser", Refusing)
    code = main(["call", "simulate", "--via", "pbx", "--to", "+441632960001",
                 "--audiosocket", "127.0.0.1:9", "--secret", "s", "--say", "Hello", *given])
    assert code == 69 and asked == [voice]
