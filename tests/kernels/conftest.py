"""Fixtures for the kernel tests: each kernel's twins, and the audioop peer.

Every kernel test runs against both implementations (ids ``py`` and ``c``). The
compiled one must load unless the environment says it was not built
(``BUILD_KERNELS=no``) or must not be used (``KERNELS_NO_EXTENSIONS=1``); then
its cases are skipped, never silently run against the twin.
"""

import importlib
import os
import warnings

import pytest

#: KERNELS_NO_EXTENSIONS=1: the selectors must serve the pure-Python twins.
PURE_FORCED = bool(os.environ.get("KERNELS_NO_EXTENSIONS"))
#: Unless forced pure or built without them, the compiled kernels must load.
COMPILED_EXPECTED = not PURE_FORCED and os.environ.get("BUILD_KERNELS", "yes").lower() not in {
    "no",
    "0",
    "false",
}

IMPLEMENTATIONS = ("py", "c")


def load_twin(kernel: str, implementation: str):
    """The ``_<kernel>_<implementation>`` module; an ImportError fails the test."""
    if implementation == "c" and not COMPILED_EXPECTED:
        pytest.skip("compiled kernels are switched off in this environment")
    return importlib.import_module(f"kernels._{kernel}_{implementation}")


@pytest.fixture(scope="session", params=IMPLEMENTATIONS)
def ulaw(request):
    return load_twin("ulaw", request.param)


@pytest.fixture(scope="session", params=IMPLEMENTATIONS)
def resample(request):
    return load_twin("resample", request.param)


@pytest.fixture(scope="session", params=IMPLEMENTATIONS)
def energy(request):
    return load_twin("energy", request.param)


def _import_audioop():
    # audioop is in the stdlib up to 3.12; from 3.13 the audioop-lts wheel
    # installs a module of the same name.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return importlib.import_module("audioop")
        except ImportError:
            return None


@pytest.fixture(scope="session")
def audioop():
    module = _import_audioop()
    if module is None:
        pytest.skip("audioop is not installed (on 3.13+ install audioop-lts)")
    return module
