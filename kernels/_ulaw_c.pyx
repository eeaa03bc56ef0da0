# cython: always_allow_keywords=False
"""G.711 μ-law companding, compiled: same interface and bytes as ``_ulaw_py``.

The encoder computes the segment and mantissa with an int-to-float conversion
instead of audioop's segment search: the float's exponent is the segment and its
top four mantissa bits are the code's mantissa. That is branch-free, so the
compiler vectorises the loop. ``tests/kernels`` proves it equal to the twin and
to audioop for all 65536 samples.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int16_t, uint8_t

from kernels._buffers cimport (
    NOGIL_MIN_BYTES,
    PyBuffer_Release,
    acquire_bytes,
    acquire_output,
    acquire_pcm16,
)

cdef extern from *:
    """
    #include <string.h>

    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #include <immintrin.h>
    #define ULAW_HAVE_SIMD 1
    #endif

    /* The μ-law code of every sample; see the module docstring for the float trick.
       One body, compiled for the baseline (SSE2 on x86-64) and for AVX2. */
    #define ULAW_ENCODE_BODY                                                          \
        for (Py_ssize_t i = 0; i < count; i++) {                                      \
            int32_t magnitude = pcm[i] >> 2;          /* 14 bits, as audioop */       \
            int32_t negative = magnitude >> 31;       /* -1 or 0 */                   \
            magnitude = (magnitude ^ negative) - negative;                            \
            magnitude = magnitude < 8159 ? magnitude : 8159;                          \
            float biased = (float)(magnitude + 33);   /* exact: below 2**24 */        \
            int32_t bits;                                                             \
            memcpy(&bits, &biased, sizeof bits);                                      \
            /* biased exponent and top 4 mantissa bits; segment 0 has exponent 5 */   \
            int32_t code = (bits >> 19) - ((127 + 5) << 4);                           \
            code = code < 0x7F ? code : 0x7F;  /* segment 8 holds only the clip */    \
            codes[i] = (uint8_t)(code ^ (0xFF ^ (negative & 0x80)));                  \
        }

    static void
    ulaw_encode_baseline(const int16_t *pcm, uint8_t *codes, Py_ssize_t count)
    {
        ULAW_ENCODE_BODY
    }

    #ifdef ULAW_HAVE_SIMD
    __attribute__((target("avx2"))) static void
    ulaw_encode_avx2(const int16_t *pcm, uint8_t *codes, Py_ssize_t count)
    {
        ULAW_ENCODE_BODY
    }
    #endif

    static void (*ulaw_encoder)(const int16_t *, uint8_t *, Py_ssize_t) = ulaw_encode_baseline;

    static void
    ulaw_encode(const int16_t *pcm, uint8_t *codes, Py_ssize_t count)
    {
        ulaw_encoder(pcm, codes, count);
    }

    /* G.711 table 2, filled by ulaw_fill_decode_table() when the module loads. */
    static int16_t ulaw_decode_table[256];

    static void
    ulaw_fill_decode_table(void)
    {
        for (int32_t code = 0; code < 256; code++) {
            int32_t inverted = ~code & 0xFF;
            int32_t exponent = (inverted >> 4) & 0x07;
            int32_t magnitude = ((((inverted & 0x0F) << 3) + 0x84) << exponent) - 0x84;
            ulaw_decode_table[code] = (int16_t)((inverted & 0x80) ? -magnitude : magnitude);
        }
    }

    #ifdef ULAW_HAVE_SIMD
    /* Sixteen codes a step: pshufb looks up the mantissa term ((m << 3) + 0x84,
       which fits a byte) and 2**exponent, a 16-bit multiply shifts, a sign mask
       negates. A table lookup per sample cannot beat audioop; this can.
       Returns how many codes it decoded (a multiple of 16). */
    __attribute__((target("ssse3"))) static Py_ssize_t
    ulaw_decode_ssse3(const uint8_t *codes, int16_t *pcm, Py_ssize_t count)
    {
        const __m128i mantissa_terms = _mm_setr_epi8(
            (char)0x84, (char)0x8C, (char)0x94, (char)0x9C, (char)0xA4, (char)0xAC, (char)0xB4, (char)0xBC,
            (char)0xC4, (char)0xCC, (char)0xD4, (char)0xDC, (char)0xE4, (char)0xEC, (char)0xF4, (char)0xFC);
        const __m128i powers = _mm_setr_epi8(
            1, 2, 4, 8, 16, 32, 64, (char)128, 1, 2, 4, 8, 16, 32, 64, (char)128);
        const __m128i low_nibble = _mm_set1_epi8(0x0F), exponent_bits = _mm_set1_epi8(0x07);
        const __m128i bias = _mm_set1_epi16(0x84), zero = _mm_setzero_si128();
        Py_ssize_t i = 0;
        for (; i + 16 <= count; i += 16) {
            __m128i code = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(codes + i)),
                                         _mm_set1_epi8((char)0xFF));
            __m128i term = _mm_shuffle_epi8(mantissa_terms, _mm_and_si128(code, low_nibble));
            __m128i power = _mm_shuffle_epi8(
                powers, _mm_and_si128(_mm_srli_epi16(code, 4), exponent_bits));
            __m128i negative = _mm_cmplt_epi8(code, zero);  /* sign bit of the inverted code */
            __m128i low = _mm_sub_epi16(_mm_mullo_epi16(_mm_unpacklo_epi8(term, zero),
                                                        _mm_unpacklo_epi8(power, zero)), bias);
            __m128i high = _mm_sub_epi16(_mm_mullo_epi16(_mm_unpackhi_epi8(term, zero),
                                                         _mm_unpackhi_epi8(power, zero)), bias);
            __m128i low_sign = _mm_unpacklo_epi8(negative, negative);
            __m128i high_sign = _mm_unpackhi_epi8(negative, negative);
            _mm_storeu_si128((__m128i *)(pcm + i),
                             _mm_sub_epi16(_mm_xor_si128(low, low_sign), low_sign));
            _mm_storeu_si128((__m128i *)(pcm + i + 8),
                             _mm_sub_epi16(_mm_xor_si128(high, high_sign), high_sign));
        }
        return i;
    }
    #endif

    static int ulaw_use_ssse3 = 0;  /* else the table alone */

    static void
    ulaw_decode(const uint8_t *codes, int16_t *pcm, Py_ssize_t count)
    {
        Py_ssize_t i = 0;
    #ifdef ULAW_HAVE_SIMD
        if (ulaw_use_ssse3) {
            i = ulaw_decode_ssse3(codes, pcm, count);
        }
    #endif
        for (; i < count; i++) {
            pcm[i] = ulaw_decode_table[codes[i]];
        }
    }

    /* SIMD levels: 2 = AVX2 encoder and SSSE3 decoder, 1 = SSSE3 decoder,
       0 = baseline (the compiler's SSE2 encoder, the table decoder). */
    static int
    ulaw_can_run(int level)
    {
    #ifdef ULAW_HAVE_SIMD
        __builtin_cpu_init();
        return !((level >= 2 && !__builtin_cpu_supports("avx2"))
                 || (level >= 1 && !__builtin_cpu_supports("ssse3")));
    #else
        return level == 0;
    #endif
    }

    static void
    ulaw_use_level(int level)  /* a level ulaw_can_run() */
    {
    #ifdef ULAW_HAVE_SIMD
        ulaw_encoder = level >= 2 ? ulaw_encode_avx2 : ulaw_encode_baseline;
        ulaw_use_ssse3 = level >= 1;
    #endif
    }
    """
    void ulaw_encode(const int16_t *pcm, uint8_t *codes, Py_ssize_t count) noexcept nogil
    void ulaw_decode(const uint8_t *codes, int16_t *pcm, Py_ssize_t count) noexcept nogil
    void ulaw_fill_decode_table() noexcept
    int ulaw_can_run(int level) noexcept
    void ulaw_use_level(int level) noexcept


#: SIMD levels, best first; tests run every one this CPU has.
SIMD_LEVELS = {"avx2": 2, "ssse3": 1, "baseline": 0}


def _simd_paths():
    """The SIMD paths this CPU can run, best first (tests check each against the twin)."""
    return tuple(name for name, level in SIMD_LEVELS.items() if ulaw_can_run(level))


def _use_simd(str path):
    """Route the loops through ``path``, one of :func:`_simd_paths`."""
    if not ulaw_can_run(SIMD_LEVELS[path]):
        raise ValueError(f"this CPU cannot run the {path} path")
    ulaw_use_level(SIMD_LEVELS[path])


ulaw_fill_decode_table()
_use_simd(_simd_paths()[0])


cdef inline void encode(Py_buffer *source, uint8_t *codes) noexcept:
    if source.len < NOGIL_MIN_BYTES:
        ulaw_encode(<const int16_t *>source.buf, codes, source.len >> 1)
    else:
        with nogil:
            ulaw_encode(<const int16_t *>source.buf, codes, source.len >> 1)


cdef inline void decode(Py_buffer *source, int16_t *pcm) noexcept:
    if source.len < NOGIL_MIN_BYTES:
        ulaw_decode(<const uint8_t *>source.buf, pcm, source.len)
    else:
        with nogil:
            ulaw_decode(<const uint8_t *>source.buf, pcm, source.len)


def lin2ulaw(pcm):
    """Encode 16-bit PCM (any bytes-like object) to μ-law, one byte per sample."""
    cdef Py_buffer source
    acquire_pcm16(pcm, &source)
    try:
        codes = PyBytes_FromStringAndSize(NULL, source.len >> 1)
        encode(&source, <uint8_t *>PyBytes_AS_STRING(codes))
    finally:
        PyBuffer_Release(&source)
    return codes


def ulaw2lin(codes):
    """Decode μ-law bytes (any bytes-like object) to 16-bit PCM."""
    cdef Py_buffer source
    acquire_bytes(codes, &source)
    try:
        pcm = PyBytes_FromStringAndSize(NULL, 2 * source.len)
        decode(&source, <int16_t *>PyBytes_AS_STRING(pcm))
    finally:
        PyBuffer_Release(&source)
    return pcm


def lin2ulaw_into(pcm, out):
    """Encode ``pcm`` into the start of the writable buffer ``out``; return the bytes written."""
    cdef Py_buffer source, target
    acquire_pcm16(pcm, &source)
    try:
        acquire_output(out, &target, source.len >> 1)
        encode(&source, <uint8_t *>target.buf)
        PyBuffer_Release(&target)
    finally:
        PyBuffer_Release(&source)
    return source.len >> 1


def ulaw2lin_into(codes, out):
    """Decode ``codes`` into the start of the writable buffer ``out``; return the bytes written."""
    cdef Py_buffer source, target
    acquire_bytes(codes, &source)
    try:
        acquire_output(out, &target, 2 * source.len)
        decode(&source, <int16_t *>target.buf)
        PyBuffer_Release(&target)
    finally:
        PyBuffer_Release(&source)
    return 2 * source.len
