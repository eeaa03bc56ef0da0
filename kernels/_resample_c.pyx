# cython: always_allow_keywords=False
"""Streaming polyphase resampler, compiled: same interface and bytes as ``_resample_py``.

See ``_resample_py`` for what the resampler computes. Here the dot products run
on SSE2 (every x86-64) or AVX2 (chosen when the module loads), with int32 lanes
added in 64 bits at the end; ``_resample_design`` proves no lane can overflow.
Elsewhere a plain int64 loop gives the same exact sums.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from libc.stdint cimport int16_t
from libc.string cimport memcpy, memmove, memset

from kernels._buffers cimport NOGIL_MIN_BYTES, PyBuffer_Release, acquire_output, acquire_pcm16

from kernels._resample_spec import filter_taps

cdef extern from *:
    """
    #include <stdint.h>

    static inline int16_t
    resample_round(int64_t total)  /* Q15 back to int16: half up, saturated */
    {
        total = (total + (1 << 14)) >> 15;
        return (int16_t)(total > 32767 ? 32767 : total < -32768 ? -32768 : total);
    }

    /* Produces every output whose last input sample is in the window; returns how
       many. window holds taps - 1 samples of history, then `available` new ones.
       *position: next output's time in 1/up samples from the first new sample. */
    #define RESAMPLE_RUN_BODY(dot)                                                      \\
        Py_ssize_t produced = 0, position = *position_io, end = available * up;       \\
        Py_ssize_t whole = down / up, fraction = down % up;                           \\
        Py_ssize_t start = position / up, phase = position % up;                      \\
        while (start * up + phase < end) {                                            \\
            out[produced++] = resample_round(dot(window + start, phases + phase * taps, taps)); \\
            start += whole;                                                            \\
            phase += fraction;                                                         \\
            if (phase >= up) { phase -= up; start++; }                                 \\
        }                                                                              \\
        *position_io = start * up + phase - end;                                       \\
        return produced;

    static inline int64_t
    resample_dot_scalar(const int16_t *x, const int16_t *h, Py_ssize_t taps)
    {
        int64_t total = 0;
        for (Py_ssize_t i = 0; i < taps; i++) total += (int32_t)x[i] * h[i];
        return total;
    }

    static Py_ssize_t
    resample_run_scalar(const int16_t *phases, Py_ssize_t taps, Py_ssize_t up, Py_ssize_t down,
                        const int16_t *window, Py_ssize_t available,
                        Py_ssize_t *position_io, int16_t *out)
    {
        RESAMPLE_RUN_BODY(resample_dot_scalar)
    }

    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #include <immintrin.h>
    #define RESAMPLE_HAVE_SIMD 1

    /* taps is a multiple of 8. pmaddwd lane j sums taps i with i % 8 in {2j, 2j+1}. */
    static inline int64_t
    resample_dot_sse2(const int16_t *x, const int16_t *h, Py_ssize_t taps)
    {
        __m128i lanes = _mm_setzero_si128();
        for (Py_ssize_t i = 0; i < taps; i += 8) {
            lanes = _mm_add_epi32(lanes, _mm_madd_epi16(_mm_loadu_si128((const __m128i *)(x + i)),
                                                        _mm_loadu_si128((const __m128i *)(h + i))));
        }
        int32_t lane[4];
        _mm_storeu_si128((__m128i *)lane, lanes);
        return (int64_t)lane[0] + lane[1] + lane[2] + lane[3];
    }

    static Py_ssize_t
    resample_run_sse2(const int16_t *phases, Py_ssize_t taps, Py_ssize_t up, Py_ssize_t down,
                      const int16_t *window, Py_ssize_t available,
                      Py_ssize_t *position_io, int16_t *out)
    {
        RESAMPLE_RUN_BODY(resample_dot_sse2)
    }

    /* Sixteen taps a step; each AVX2 lane sums a subset of an SSE2 lane's taps. */
    __attribute__((target("avx2"))) static inline int64_t
    resample_dot_avx2(const int16_t *x, const int16_t *h, Py_ssize_t taps)
    {
        __m256i wide = _mm256_setzero_si256();
        Py_ssize_t i = 0;
        for (; i + 16 <= taps; i += 16) {
            wide = _mm256_add_epi32(wide, _mm256_madd_epi16(
                _mm256_loadu_si256((const __m256i *)(x + i)),
                _mm256_loadu_si256((const __m256i *)(h + i))));
        }
        __m256i wide64 = _mm256_add_epi64(
            _mm256_cvtepi32_epi64(_mm256_castsi256_si128(wide)),
            _mm256_cvtepi32_epi64(_mm256_extracti128_si256(wide, 1)));
        if (i < taps) {  /* a last step of eight */
            __m128i narrow = _mm_madd_epi16(_mm_loadu_si128((const __m128i *)(x + i)),
                                            _mm_loadu_si128((const __m128i *)(h + i)));
            wide64 = _mm256_add_epi64(wide64, _mm256_cvtepi32_epi64(narrow));
        }
        __m128i half = _mm_add_epi64(_mm256_castsi256_si128(wide64),
                                     _mm256_extracti128_si256(wide64, 1));
        return _mm_cvtsi128_si64(half) + _mm_extract_epi64(half, 1);
    }

    __attribute__((target("avx2"))) static inline __m256i
    resample_widen_avx2(__m256i lanes)  /* eight int32 lanes to four int64 sums */
    {
        return _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(lanes)),
                                _mm256_cvtepi32_epi64(_mm256_extracti128_si256(lanes, 1)));
    }

    /* Doubling the rate (8 to 16 kHz, the speech-recognition path): each input
       sample completes one output per branch, and both branches read the same
       window, so one pass loads it once and the two sums are reduced together. */
    __attribute__((target("avx2"))) static Py_ssize_t
    resample_double_avx2(const int16_t *phases, Py_ssize_t taps,
                         const int16_t *window, Py_ssize_t available, int16_t *out)
    {
        const int16_t *even = phases, *odd = phases + taps;
        for (Py_ssize_t n = 0; n < available; n++) {
            const int16_t *x = window + n;
            __m256i first = _mm256_setzero_si256(), second = _mm256_setzero_si256();
            Py_ssize_t i = 0;
            for (; i + 16 <= taps; i += 16) {
                __m256i samples = _mm256_loadu_si256((const __m256i *)(x + i));
                first = _mm256_add_epi32(first, _mm256_madd_epi16(
                    samples, _mm256_loadu_si256((const __m256i *)(even + i))));
                second = _mm256_add_epi32(second, _mm256_madd_epi16(
                    samples, _mm256_loadu_si256((const __m256i *)(odd + i))));
            }
            __m256i first64 = resample_widen_avx2(first), second64 = resample_widen_avx2(second);
            if (i < taps) {  /* a last step of eight */
                __m128i samples = _mm_loadu_si128((const __m128i *)(x + i));
                first64 = _mm256_add_epi64(first64, _mm256_cvtepi32_epi64(
                    _mm_madd_epi16(samples, _mm_loadu_si128((const __m128i *)(even + i)))));
                second64 = _mm256_add_epi64(second64, _mm256_cvtepi32_epi64(
                    _mm_madd_epi16(samples, _mm_loadu_si128((const __m128i *)(odd + i)))));
            }
            /* [f0+f1, s0+s1, f2+f3, s2+s3], then the halves added: [first, second] */
            __m256i pairs = _mm256_add_epi64(_mm256_unpacklo_epi64(first64, second64),
                                             _mm256_unpackhi_epi64(first64, second64));
            __m128i sums = _mm_add_epi64(_mm256_castsi256_si128(pairs),
                                         _mm256_extracti128_si256(pairs, 1));
            out[2 * n] = resample_round(_mm_cvtsi128_si64(sums));
            out[2 * n + 1] = resample_round(_mm_extract_epi64(sums, 1));
        }
        return 2 * available;
    }

    __attribute__((target("avx2"))) static Py_ssize_t
    resample_run_avx2(const int16_t *phases, Py_ssize_t taps, Py_ssize_t up, Py_ssize_t down,
                      const int16_t *window, Py_ssize_t available,
                      Py_ssize_t *position_io, int16_t *out)
    {
        if (up == 2 && down == 1) {  /* the position stays 0: whole input samples */
            return resample_double_avx2(phases, taps, window, available, out);
        }
        RESAMPLE_RUN_BODY(resample_dot_avx2)
    }
    #endif

    typedef Py_ssize_t (*resample_runner)(const int16_t *, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                                          const int16_t *, Py_ssize_t, Py_ssize_t *, int16_t *);

    /* The runner for a SIMD level (2 = AVX2, 1 = SSE2, 0 = scalar), or NULL if this
       CPU cannot run it. */
    static resample_runner
    resample_runner_for(int level)
    {
    #ifdef RESAMPLE_HAVE_SIMD
        __builtin_cpu_init();
        if (level == 2) return __builtin_cpu_supports("avx2") ? resample_run_avx2 : NULL;
        if (level == 1) return resample_run_sse2;  /* all of x86-64 */
    #endif
        return level == 0 ? resample_run_scalar : NULL;
    }
    """
    ctypedef Py_ssize_t (*resample_runner)(
        const int16_t *phases, Py_ssize_t taps, Py_ssize_t up, Py_ssize_t down,
        const int16_t *window, Py_ssize_t available, Py_ssize_t *position_io, int16_t *out
    ) noexcept nogil
    resample_runner resample_runner_for(int level) noexcept


cdef resample_runner run_filter = NULL

#: SIMD levels, best first; tests run every one this CPU has.
SIMD_LEVELS = {"avx2": 2, "sse2": 1, "scalar": 0}


def _simd_paths():
    """The SIMD paths this CPU can run, best first (tests check each against the twin)."""
    return tuple(name for name, level in SIMD_LEVELS.items() if resample_runner_for(level) != NULL)


def _use_simd(str path):
    """Route the dot products through ``path``, one of :func:`_simd_paths`."""
    global run_filter
    cdef resample_runner runner = resample_runner_for(SIMD_LEVELS[path])
    if runner == NULL:
        raise ValueError(f"this CPU cannot run the {path} path")
    run_filter = runner


_use_simd(_simd_paths()[0])

#: Packed Q15 branches per (from_rate, to_rate), shared by every resampler.
cdef dict _packed_phases = {}


cdef bytes packed_phases(int from_rate, int to_rate, object taps):
    key = (from_rate, to_rate)
    packed = _packed_phases.get(key)
    if packed is None:
        from array import array
        packed = array("h", [tap for phase in taps.phases for tap in phase]).tobytes()
        _packed_phases[key] = packed
    return packed


cdef class Resampler:
    """Converts a stream of 16-bit PCM frames (see ``_resample_py.Resampler``).

    One per stream: it keeps the stream's history, and a call on a long buffer
    releases the GIL, so one instance must not be fed from two threads at once.
    """

    cdef readonly int from_rate
    cdef readonly int to_rate
    cdef readonly double delay
    cdef Py_ssize_t up, down, taps, position
    cdef bytes phases_owner  # keeps phases alive
    cdef const int16_t *phases
    cdef int16_t *window  # taps - 1 samples of history, then the frame being processed
    cdef Py_ssize_t window_capacity  # samples

    def __cinit__(self, int from_rate, int to_rate):
        taps = filter_taps(from_rate, to_rate)
        self.from_rate, self.to_rate, self.delay = from_rate, to_rate, taps.delay_seconds
        self.up, self.down, self.taps = taps.up, taps.down, taps.taps_per_phase
        self.phases_owner = packed_phases(from_rate, to_rate, taps)
        self.phases = <const int16_t *>PyBytes_AS_STRING(self.phases_owner)
        self.window_capacity = self.taps - 1 + 960  # 20 ms at 48 kHz without a realloc
        self.window = <int16_t *>PyMem_Malloc(self.window_capacity * sizeof(int16_t))
        if self.window is NULL:
            raise MemoryError()
        self.reset()

    def __dealloc__(self):
        PyMem_Free(self.window)

    def reset(self):
        """Forget all past input, as if the stream began again with silence."""
        memset(self.window, 0, (self.taps - 1) * sizeof(int16_t))
        self.position = 0

    def output_length(self, Py_ssize_t samples):
        """How many samples :meth:`process` returns for ``samples`` more input samples."""
        return self.pending(samples)

    cdef inline Py_ssize_t pending(self, Py_ssize_t samples) noexcept:
        cdef Py_ssize_t remaining = samples * self.up - self.position
        return (remaining + self.down - 1) // self.down if remaining > 0 else 0

    cdef int reserve(self, Py_ssize_t samples) except -1:
        cdef Py_ssize_t needed = self.taps - 1 + samples
        cdef int16_t *grown
        if needed > self.window_capacity:
            grown = <int16_t *>PyMem_Realloc(self.window, needed * sizeof(int16_t))
            if grown is NULL:
                raise MemoryError()
            self.window, self.window_capacity = grown, needed
        return 0

    cdef Py_ssize_t run(self, Py_buffer *frame, int16_t *out) noexcept:
        """Filter the frame into ``out`` (room for pending() samples); slide the history."""
        cdef Py_ssize_t samples = frame.len >> 1, produced
        cdef int16_t *history = self.window
        memcpy(history + self.taps - 1, frame.buf, frame.len)
        if frame.len < NOGIL_MIN_BYTES:
            produced = run_filter(self.phases, self.taps, self.up, self.down,
                                  history, samples, &self.position, out)
        else:
            with nogil:
                produced = run_filter(self.phases, self.taps, self.up, self.down,
                                      history, samples, &self.position, out)
        memmove(history, history + samples, (self.taps - 1) * sizeof(int16_t))
        return produced

    def process(self, frame):
        """Resample one frame (bytes-like 16-bit PCM); return the output it completes."""
        cdef Py_buffer source
        acquire_pcm16(frame, &source)
        try:
            self.reserve(source.len >> 1)
            out = PyBytes_FromStringAndSize(NULL, 2 * self.pending(source.len >> 1))
            self.run(&source, <int16_t *>PyBytes_AS_STRING(out))
        finally:
            PyBuffer_Release(&source)
        return out

    def process_into(self, frame, out):
        """Like :meth:`process`, writing into the writable buffer ``out``; return bytes written."""
        cdef Py_buffer source, target
        cdef Py_ssize_t written
        acquire_pcm16(frame, &source)
        try:
            written = 2 * self.pending(source.len >> 1)
            acquire_output(out, &target, written)
            try:
                self.reserve(source.len >> 1)
                self.run(&source, <int16_t *>target.buf)
            finally:
                PyBuffer_Release(&target)
        finally:
            PyBuffer_Release(&source)
        return written


def resample(data, int from_rate, int to_rate):
    """Resample a whole buffer at once: what a fresh :class:`Resampler` makes of it."""
    return Resampler(from_rate, to_rate).process(data)
