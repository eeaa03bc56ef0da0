# Buffer-protocol helpers shared by the kernels' entry points.
#
# A per-frame call carries 160 samples, so acquiring a typed memoryview would cost
# more than the work itself: entry points take any bytes-like object through
# PyObject_GetBuffer (a few nanoseconds) and hand raw pointers to nogil loops.

from cpython.buffer cimport PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer

#: Buffers at least this long (bytes) are worth releasing the GIL for; shorter
#: ones finish before another thread could make use of it.
cdef enum:
    NOGIL_MIN_BYTES = 16384


cdef inline int acquire_bytes(object obj, Py_buffer *view) except -1:
    """Fill ``view`` with ``obj``'s bytes, whatever their count."""
    return PyObject_GetBuffer(obj, view, PyBUF_SIMPLE)


cdef inline int acquire_pcm16(object obj, Py_buffer *view) except -1:
    """Fill ``view`` with ``obj``'s bytes; refuse an odd byte count (half a sample)."""
    PyObject_GetBuffer(obj, view, PyBUF_SIMPLE)
    if view.len & 1:
        PyBuffer_Release(view)
        raise ValueError(f"16-bit PCM needs an even number of bytes, got {view.len}")
    return 0


cdef inline int acquire_output(object obj, Py_buffer *view, Py_ssize_t needed) except -1:
    """Fill ``view`` with the writable ``obj``; refuse one shorter than ``needed`` bytes."""
    PyObject_GetBuffer(obj, view, PyBUF_WRITABLE)
    if view.len < needed:
        PyBuffer_Release(view)
        raise ValueError(f"the output buffer holds {view.len} bytes, {needed} are needed")
    return 0
