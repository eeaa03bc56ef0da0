"""G.711 μ-law companding: the compiled kernel, or its pure-Python twin."""

__all__ = ("lin2ulaw", "lin2ulaw_into", "ulaw2lin", "ulaw2lin_into")

from typing import TYPE_CHECKING

from kernels import NO_EXTENSIONS

if TYPE_CHECKING or NO_EXTENSIONS:
    from kernels._ulaw_py import lin2ulaw, lin2ulaw_into, ulaw2lin, ulaw2lin_into
else:
    try:
        from kernels._ulaw_c import lin2ulaw, lin2ulaw_into, ulaw2lin, ulaw2lin_into
    except ImportError:  # not built (BUILD_KERNELS=no); tests/kernels fails if it should have been
        from kernels._ulaw_py import lin2ulaw, lin2ulaw_into, ulaw2lin, ulaw2lin_into
