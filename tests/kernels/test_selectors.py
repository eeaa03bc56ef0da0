"""The selectors load the compiled kernels unless the environment rules them out."""

import importlib

import pytest

from .conftest import COMPILED_EXPECTED, PURE_FORCED

KERNELS = {"ulaw": "lin2ulaw", "resample": "Resampler", "energy": "Detector"}


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_selector_serves_the_compiled_kernel_when_it_should(kernel):
    if not (COMPILED_EXPECTED or PURE_FORCED):
        pytest.skip("BUILD_KERNELS=no: a compiled kernel left from an earlier build may serve")
    selector = importlib.import_module(f"kernels.{kernel}")
    expected = "c" if COMPILED_EXPECTED else "py"
    twin = importlib.import_module(f"kernels._{kernel}_{expected}")
    assert getattr(selector, KERNELS[kernel]) is getattr(twin, KERNELS[kernel])


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_compiled_kernel_is_built(kernel):
    if not COMPILED_EXPECTED:
        pytest.skip("compiled kernels are switched off in this environment")
    importlib.import_module(f"kernels._{kernel}_c")  # an ImportError fails here
