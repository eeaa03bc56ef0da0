"""pytest-benchmark set-up for the kernel benchmarks.

Run them with ``.venv/bin/python -m pytest benchmarks`` (the main suite's
testpaths is tests/, so it never collects them). Files here are named
``bench_*.py``; this hook collects them. For the ratio table run
``benchmarks/kernels_table.py``.
"""

import pytest


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".py" and file_path.name.startswith("bench_"):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


@pytest.fixture
def run(benchmark):
    """Time one contender of one case, grouped with its rivals."""

    def timed(case, contender):
        benchmark.group = f"{case.name} ({'bulk, 60 s' if case.bulk else 'per 20 ms frame'})"
        benchmark(case.contenders[contender])

    return timed
