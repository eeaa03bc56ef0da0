"""G.711 mu-law encode and decode against audioop, numpy and a memcpy."""

import pytest
from _cases import benchmark_params


@pytest.mark.parametrize("case, contender", benchmark_params("ulaw"))
def test_ulaw(run, case, contender):
    run(case, contender)
