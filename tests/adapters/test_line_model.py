"""A line's own language model: built from its sentences, and heard with."""

from __future__ import annotations

import anyio
import pytest

from adapters.speech.line_model import LineModel, build_in_worker, build_line_model
from adapters.speech.sphinx import LocalRecogniser
from core.speech_model import LineText, line_sentences
from kernels.resample import Resampler
from tests.adapters.test_speech_local import GUARD
from tests.support.fresh_voice import fresh_speech

pytestmark = pytest.mark.anyio

CLINIC = LineText("You are the receptionist of Kerrigan Physiotherapy.",
                  ["We are open from 8am to 6pm. The car park gate code is 4521."],
                  ["Take a message for the office."])


def entries(model: LineModel) -> dict[str, str]:
    lines = model.dictionary.read_text().splitlines()
    return dict(line.split(" ", 1) for line in lines)


def test_the_dictionary_holds_the_models_words_from_the_cmu_dictionary_or_espeak(tmp_path):
    model = build_line_model(line_sentences(CLINIC), tmp_path / "line")
    assert model.exists() and not list(tmp_path.glob(".line.building*"))
    known = entries(model)
    assert known["appointment"] == "AH P OY N T M AH N T"  # the bundled dictionary's
    assert known["kerrigan"] == "K EH R IH G AH N"  # not in it: eSpeak NG's, as CMU phones
    words = {w for line in model.language_model.read_text().splitlines()[1:]
             for w in line.split()[1:2]}
    assert {"kerrigan", "physiotherapy", "gate"} <= words


def test_a_rebuild_replaces_the_model_whole(tmp_path):
    build_line_model(["the first model"], tmp_path / "line")
    model = build_line_model(["a second one"], tmp_path / "line")
    assert "second" in entries(model) and "first" not in entries(model)


async def test_a_line_model_is_built_in_a_worker_and_hears_the_lines_words(tmp_path):
    with anyio.fail_after(GUARD):
        model = await build_in_worker(line_sentences(CLINIC), tmp_path / "line")
    question = "What are your opening hours?"
    pcm = (await fresh_speech([question], "en-us"))[question]
    telephone = Resampler(16000, 8000).process(pcm)
    with anyio.fail_after(GUARD):
        heard = await LocalRecogniser().tuned(model).transcribe(telephone, 8000)
    assert heard == "what are your opening hours"
