# cython: always_allow_keywords=False
"""Frame energy and a barge-in detector, compiled: same interface and results as ``_energy_py``.

The sum of squares is exact (64-bit), so ``rms`` returns bit for bit what the
twin's Python ints give; the detector's state is a handful of C integers.
"""

from libc.math cimport sqrt
from libc.stdint cimport int16_t, uint64_t

from kernels._buffers cimport NOGIL_MIN_BYTES, PyBuffer_Release, acquire_pcm16

from kernels._energy_events import VoiceEvent

cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #include <emmintrin.h>
    #endif

    /* Exact sum of squares. pmaddwd adds two squares, at most 2**31, which fits
       its lane read as unsigned; lanes are widened to 64 bits as they are added. */
    static uint64_t
    energy_sum_squares(const int16_t *x, Py_ssize_t count)
    {
        uint64_t total = 0;
        Py_ssize_t i = 0;
    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        const __m128i zero = _mm_setzero_si128();
        __m128i sums = zero;
        for (; i + 8 <= count; i += 8) {
            __m128i samples = _mm_loadu_si128((const __m128i *)(x + i));
            __m128i pairs = _mm_madd_epi16(samples, samples);
            sums = _mm_add_epi64(sums, _mm_unpacklo_epi32(pairs, zero));
            sums = _mm_add_epi64(sums, _mm_unpackhi_epi32(pairs, zero));
        }
        uint64_t lanes[2];
        _mm_storeu_si128((__m128i *)lanes, sums);
        total = lanes[0] + lanes[1];
    #endif
        for (; i < count; i++) total += (uint32_t)((int32_t)x[i] * x[i]);
        return total;
    }
    """
    uint64_t energy_sum_squares(const int16_t *x, Py_ssize_t count) noexcept nogil

cdef enum:
    SPEECH_START = 1
    SPEECH_END = 2
    BARGE_IN = 4

assert (SPEECH_START, SPEECH_END, BARGE_IN) == tuple(VoiceEvent), "VoiceEvent changed"


cdef double frame_rms(Py_buffer *frame) noexcept:
    cdef Py_ssize_t count = frame.len >> 1
    cdef uint64_t total
    if count == 0:
        return 0.0
    if frame.len < NOGIL_MIN_BYTES:
        total = energy_sum_squares(<const int16_t *>frame.buf, count)
    else:
        with nogil:
            total = energy_sum_squares(<const int16_t *>frame.buf, count)
    return sqrt(<double>total / <double>count) / 32768.0


def rms(frame):
    """Root mean square of 16-bit PCM (bytes-like), 0.0 to 1.0 of full scale; 0.0 if empty."""
    cdef Py_buffer source
    acquire_pcm16(frame, &source)
    cdef double level = frame_rms(&source)
    PyBuffer_Release(&source)
    return level


def zero_crossings(frame):
    """How often 16-bit PCM (bytes-like) changes sign: pairs of neighbours, one below
    zero and one at or above it; 0 for fewer than two samples."""
    cdef Py_buffer source
    acquire_pcm16(frame, &source)
    cdef const int16_t *x = <const int16_t *>source.buf
    cdef Py_ssize_t count = source.len >> 1
    cdef Py_ssize_t i, crossings = 0
    for i in range(1, count):
        crossings += (x[i - 1] < 0) != (x[i] < 0)
    PyBuffer_Release(&source)
    return crossings


cdef Py_ssize_t duration_samples(long long milliseconds, int sample_rate, str name) except -1:
    if milliseconds < 0:
        raise ValueError(f"{name} must not be negative, got {milliseconds}")
    return milliseconds * sample_rate // 1000


cdef class Detector:
    """Per-frame speech and barge-in detection from frame energy (see ``_energy_py.Detector``)."""

    cdef readonly int sample_rate
    cdef readonly double speech_threshold
    cdef readonly double barge_threshold
    cdef readonly bint speaking
    cdef readonly double level
    cdef Py_ssize_t min_speech, silence, barge_min  # durations, in samples
    cdef Py_ssize_t loud_run, quiet_run, barge_run
    cdef bint barge_reported

    def __init__(
        self,
        int sample_rate=8000,
        *,
        double speech_threshold=0.012,
        long long min_speech_ms=250,
        long long silence_threshold_ms=900,
        double barge_threshold=0.035,
        long long barge_min_ms=240,
    ):
        if sample_rate <= 0:
            raise ValueError(f"sample_rate must be positive, got {sample_rate}")
        self.sample_rate = sample_rate
        self.speech_threshold = speech_threshold
        self.barge_threshold = barge_threshold
        self.min_speech = duration_samples(min_speech_ms, sample_rate, "min_speech_ms")
        self.silence = duration_samples(silence_threshold_ms, sample_rate, "silence_threshold_ms")
        self.barge_min = duration_samples(barge_min_ms, sample_rate, "barge_min_ms")
        self.reset()

    def reset(self):
        """Back to silence, as at the start of a call."""
        self.speaking = False
        self.level = 0.0
        self.loud_run = self.quiet_run = self.barge_run = 0
        self.barge_reported = False

    def update(self, frame):
        """Take one frame (bytes-like 16-bit PCM); return the VoiceEvent bits it causes."""
        cdef Py_buffer source
        acquire_pcm16(frame, &source)
        cdef Py_ssize_t count = source.len >> 1
        cdef double level = frame_rms(&source)
        PyBuffer_Release(&source)
        if count == 0:
            return 0  # no time passed
        self.level = level
        return self.advance(level, count)

    cdef inline int advance(self, double level, Py_ssize_t count) noexcept:
        cdef int events = 0
        if level >= self.barge_threshold:
            self.barge_run += count
            if not self.barge_reported and self.barge_run >= self.barge_min:
                self.barge_reported = True
                events |= BARGE_IN
        else:
            self.barge_run = 0
            self.barge_reported = False
        if level >= self.speech_threshold:
            self.quiet_run = 0
            if not self.speaking:
                self.loud_run += count
                if self.loud_run >= self.min_speech:
                    self.speaking, self.loud_run = True, 0
                    events |= SPEECH_START
        else:
            self.loud_run = 0
            if self.speaking:
                self.quiet_run += count
                if self.quiet_run >= self.silence:
                    self.speaking, self.quiet_run = False, 0
                    events |= SPEECH_END
        return events
