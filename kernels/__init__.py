"""Audio kernels: Cython implementations, each with a pure-Python twin.

Each kernel ``<name>`` has a reference twin ``_<name>_py.py``, a compiled module
``_<name>_c.pyx`` with the same interface, and a selector ``<name>.py`` that the
rest of the service imports. ``KERNELS_NO_EXTENSIONS=1`` forces the pure-Python
twins (as does a non-CPython interpreter).
"""

import os
import sys

#: True when the selectors must use the pure-Python twins.
NO_EXTENSIONS = bool(os.environ.get("KERNELS_NO_EXTENSIONS")) or sys.implementation.name != "cpython"
