"""The speech engine protocols are declared once, in ``adapters.speech.base``."""

from __future__ import annotations

import ast
from pathlib import Path

import adapters.voice.transport as transport
from adapters.speech import base

ROOT = Path(__file__).resolve().parents[2]
PROTOCOLS = ("Synthesiser", "Recogniser", "TurnDetector")


def test_the_voice_session_names_the_speech_engines_own_protocols():
    for name in PROTOCOLS:
        assert getattr(transport, name) is getattr(base, name)


def test_no_other_module_declares_a_speech_protocol_again():
    declared: dict[str, list[str]] = {name: [] for name in PROTOCOLS}
    for package in ("core", "adapters", "app"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.ClassDef) and node.name in declared
                        and any(ast.unparse(b).endswith("Protocol") for b in node.bases)):
                    declared[node.name].append(str(path.relative_to(ROOT)))
    assert declared == {name: ["adapters/speech/base.py"] for name in PROTOCOLS}
