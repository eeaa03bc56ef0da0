"""The speech/barge-in detector against one written on audioop.rms."""

import pytest
from _cases import benchmark_params


@pytest.mark.parametrize("case, contender", benchmark_params("detector"))
def test_detector(run, case, contender):
    run(case, contender)
