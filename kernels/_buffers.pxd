# Buffer-protocol helpers shared by the kernels' entry points.
#
# A per-frame call carries 160 samples, so acquiring a typed memoryview would cost
# more than the work itself: entry points take any bytes-like object through
# PyObject_GetBuffer (a few nanoseconds) and hand raw pointers to nogil loops.

from cpython.buffer cimport PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE

cdef extern from *:
    """
    #define kernels_clear_owner(view) ((view)->obj = NULL)
    """
    void clear_owner "kernels_clear_owner" (Py_buffer *view)


#: Buffers at least this long (bytes) are worth releasing the GIL for; shorter
#: ones finish before another thread could make use of it.
cdef enum:
    NOGIL_MIN_BYTES = 16384


cdef inline int acquire_bytes(object obj, Py_buffer *view) except -1:
    """Fill ``view`` with ``obj``'s bytes, whatever their count.

    ``bytes``, what the transports hand over, skip the buffer protocol: with
    ``view.obj`` left NULL, PyBuffer_Release does nothing, and the caller's own
    reference keeps the object alive meanwhile.
    """
    if PyBytes_CheckExact(obj):
        view.buf = PyBytes_AS_STRING(obj)
        view.len = PyBytes_GET_SIZE(obj)
        clear_owner(view)
        return 0
    return PyObject_GetBuffer(obj, view, PyBUF_SIMPLE)


cdef inline int acquire_pcm16(object obj, Py_buffer *view) except -1:
    """Fill ``view`` with ``obj``'s bytes; refuse an odd byte count (half a sample)."""
    acquire_bytes(obj, view)
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
