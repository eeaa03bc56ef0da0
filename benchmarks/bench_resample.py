"""Resampling against soxr (HQ and QQ, streaming and one-shot), audioop.ratecv and numpy."""

import pytest
from _cases import benchmark_params


@pytest.mark.parametrize("case, contender", benchmark_params("resample"))
def test_resample(run, case, contender):
    run(case, contender)
