"""Every SIMD path of the compiled kernels gives the twin's bytes.

The compiled modules pick their best path for this CPU when they load; the
others (SSE2 or scalar loops that other machines run) would go untested here,
so these tests route the loops through each path in turn.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernels import _resample_py, _ulaw_py

from .conftest import load_twin
from .pcm import EVERY_SAMPLE, pcm, samples16
from .test_resample import CONVERSIONS, chunked, loudest_inputs

EVERY_CODE = bytes(range(256))


def simd_paths(kernel: str):
    """(module, path) for every path of the compiled ``kernel``, restoring the best after."""
    module = load_twin(kernel, "c")
    paths = module._simd_paths()
    try:
        for path in paths:
            module._use_simd(path)
            yield path
    finally:
        module._use_simd(paths[0])


@pytest.fixture(scope="module")
def compiled_ulaw():
    return load_twin("ulaw", "c")


@pytest.fixture(scope="module")
def compiled_resample():
    return load_twin("resample", "c")


def test_every_ulaw_path_is_exact(compiled_ulaw):
    for path in simd_paths("ulaw"):
        assert compiled_ulaw.lin2ulaw(EVERY_SAMPLE) == _ulaw_py.lin2ulaw(EVERY_SAMPLE), path
        assert compiled_ulaw.ulaw2lin(EVERY_CODE * 3) == _ulaw_py.ulaw2lin(EVERY_CODE * 3), path


@settings(max_examples=40)
@given(st.sampled_from(CONVERSIONS), st.lists(samples16, max_size=700), st.integers(1, 170))
def test_every_resample_path_matches_the_twin(compiled_resample, conversion, samples, size):
    data = pcm(samples)
    expected = _resample_py.resample(data, *conversion)
    for path in simd_paths("resample"):
        resampler = compiled_resample.Resampler(*conversion)
        assert b"".join(chunked(resampler, data, [size])) == expected, path


@pytest.mark.parametrize("from_rate, to_rate", CONVERSIONS)
def test_every_resample_path_saturates_alike(compiled_resample, from_rate, to_rate):
    for data in loudest_inputs(from_rate, to_rate):
        expected = _resample_py.resample(data, from_rate, to_rate)
        for path in simd_paths("resample"):
            assert compiled_resample.resample(data, from_rate, to_rate) == expected, path


def test_an_unknown_path_is_refused(compiled_resample):
    with pytest.raises(KeyError):
        compiled_resample._use_simd("neon")
