"""Generation parameters: reading them, and how the local model cuts its answer."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

from core.generation import (
    GenerationError,
    GenerationOptions,
    cut_answer,
    local_refusal,
    read_generation_options,
)


def test_the_forwarded_parameters_are_the_given_ones_and_the_smaller_limit_counts():
    options = read_generation_options({"model": "m", "max_tokens": 9, "max_completion_tokens": 4,
                                       "stop": "x", "user": "u", "temperature": None})
    assert dict(options.forwarded) == {"max_tokens": 9, "max_completion_tokens": 4, "stop": "x",
                                       "user": "u"}
    assert (options.max_tokens, options.stop, options.wants_json) == (4, ("x",), False)
    assert read_generation_options({"response_format": {"type": "text"}}).wants_json is False
    assert read_generation_options({"response_format": {"type": "json_object"}}).wants_json


@pytest.mark.parametrize(("body", "param"), [
    ({"temperature": 2.5}, "temperature"), ({"top_p": True}, "top_p"),
    ({"frequency_penalty": float("nan")}, "frequency_penalty"), ({"max_tokens": 1.5}, "max_tokens"),
    ({"stop": ["a", "b", "c", "d", "e"]}, "stop"), ({"stop": ""}, "stop"), ({"user": 5}, "user"),
    ({"response_format": {"type": "json_schema"}}, "response_format"),
])
def test_a_malformed_parameter_is_named(body, param):
    with pytest.raises(GenerationError) as refused:
        read_generation_options(body)
    assert refused.value.param == param


def test_the_local_model_takes_only_values_that_mean_no_sampling():
    assert local_refusal(read_generation_options({"temperature": 0, "top_p": 1, "seed": 5})) is None
    assert local_refusal(read_generation_options({"temperature": 1})).param == "temperature"
    refusal = local_refusal(read_generation_options({"response_format": {"type": "json_object"}}))
    assert refusal.param == "response_format"


def test_an_answer_is_cut_at_the_first_stop_then_after_max_tokens_words():
    text = "One two. Three four five."
    assert cut_answer(text, GenerationOptions(max_tokens=1)) == ("One", "length")
    assert cut_answer(text, GenerationOptions(max_tokens=5)) == (text, "stop")
    assert cut_answer(text, GenerationOptions(stop=("four", "."))) == ("One two", "stop")
    assert cut_answer(text, GenerationOptions(stop=("Three",), max_tokens=2)) == ("One two.", "stop")


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="ab .\n", max_size=40), st.integers(1, 10))
def test_a_cut_answer_is_a_prefix_with_at_most_max_tokens_words(text, limit):
    cut, reason = cut_answer(text, GenerationOptions(max_tokens=limit))
    assert text.startswith(cut) and len(cut.split()) <= limit
    assert (reason == "length") == (len(text.split()) > limit)
