"""Frame RMS against audioop.rms and numpy."""

import pytest
from _cases import benchmark_params


@pytest.mark.parametrize("case, contender", benchmark_params("rms"))
def test_rms(run, case, contender):
    run(case, contender)
