"""Build the Cython audio kernels.

Every ``kernels/_<name>_c.pyx`` becomes an extension module. ``BUILD_KERNELS=no``
skips them all; the pure-Python twins (``kernels/_<name>_py.py``) then serve.
``KERNELS_DEBUG=1`` builds with bounds checks, line tracing and annotated HTML.
"""

import os
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).parent


def kernel_extensions():
    if os.environ.get("BUILD_KERNELS", "yes").lower() in {"no", "0", "false"}:
        return []
    from Cython.Build import cythonize
    from setuptools import Extension

    debug = os.environ.get("KERNELS_DEBUG") == "1"
    sources = sorted((HERE / "kernels").glob("_*_c.pyx"))
    extensions = [
        Extension(
            f"kernels.{path.stem}",
            [str(path.relative_to(HERE))],
            extra_compile_args=["-O0", "-g"] if debug else ["-O3"],
            define_macros=[("CYTHON_TRACE_NOGIL", "1")] if debug else [],
        )
        for path in sources
    ]
    directives = {
        "language_level": "3",
        "boundscheck": debug,
        "wraparound": debug,
        "cdivision": True,
        "initializedcheck": debug,
        "linetrace": debug,
    }
    return cythonize(extensions, compiler_directives=directives, annotate=debug)


setup(ext_modules=kernel_extensions())
