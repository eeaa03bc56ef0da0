"""The listen address judged over every serving process (``core.process_listeners``)."""

from __future__ import annotations

from core.process_listeners import ProcessListener, judge_listeners

ADDRESS = "10.0.0.5:9092"


def test_every_process_listening_passes_and_each_is_named():
    passed, sentence = judge_listeners(ADDRESS, [ProcessListener("pbx-a", 101, ADDRESS),
                                                 ProcessListener("pbx-b", 201, ADDRESS)])
    assert passed
    assert sentence == (f"Listening on {ADDRESS} in all 2 processes: process 101 on pbx-a, "
                        "process 201 on pbx-b.")
    assert judge_listeners(ADDRESS, [ProcessListener("pbx-a", 101, ADDRESS)]) == (
        True, f"Listening on {ADDRESS} in the one process: process 101 on pbx-a.")


def test_one_process_astray_fails_and_says_what_it_does():
    passed, sentence = judge_listeners(ADDRESS, [
        ProcessListener("pbx-a", 101, ADDRESS), ProcessListener("pbx-a", 102, None),
        ProcessListener("pbx-b", 201, "10.0.0.5:9091")])
    assert not passed
    assert "2 of 3 processes do not listen there" in sentence
    assert "process 102 on pbx-a listens nowhere" in sentence
    assert "process 201 on pbx-b listens on 10.0.0.5:9091" in sentence
    assert "process 101" not in sentence and "restart" in sentence


def test_no_serving_process_fails():
    passed, sentence = judge_listeners(ADDRESS, [])
    assert not passed and "no svc process is serving" in sentence
