"""Audio kernels: Cython implementations, each with a pure-Python twin.

``KERNELS_NO_EXTENSIONS=1`` forces the pure-Python twins.
"""
