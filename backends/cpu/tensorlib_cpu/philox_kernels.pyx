# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Philox4x32-10 in C: the word stream, uniforms and normals that philox.py specifies, at C
speed. The numpy reference took 80 array operations per request (10 rounds of 8), about
150 us for a single number (torch.rand(1) takes 2 us) and 4x torch's time for 1e5 numbers.

Uniforms and randint words are bit-exact with the reference; normals use the same words and
float32 (or float64) Box-Muller math with libmvec's vector log/cos/sin in AVX-512 builds (the
C library's scalar ones otherwise), so they agree with the reference to rounding, as the GPU
backends do. Built without -ffast-math (setup.py EXACT_MATH): a value must not depend on its
position in a vectorized loop, so every pair goes through the vector functions. Threads: the
backend's count (fastreduce.threads_now). 1M float32 normals on one Zen 4 core: 8.7 ms with
the scalar rounds and libm, 2.1 with both vectorized (PyTorch's randn: 3.6)."""
from cython.parallel cimport prange
from libc.math cimport log, logf, sqrt, sqrtf
from libc.stdint cimport int64_t, uint32_t, uint64_t

import numpy as np

from tensorlib_cpu import fastreduce

cdef uint64_t BLOCK_MASK = (<uint64_t>1 << 62) - 1   # word index mod 2**64: block mod 2**62
cdef Py_ssize_t PARALLEL_BLOCKS = 1 << 14            # below this one thread beats a team
cdef double TWO_PI = 6.283185307179586


cdef extern from *:
    """
    #include <stdint.h>
    #include <math.h>
    #define PHILOX_BLOCK_MASK ((((uint64_t)1) << 62) - 1)
    /* 16 Philox4x32-10 blocks at a time in AVX-512 builds (the same integer rounds, so the
       same words as philox_block): the 32x32 -> 64-bit products of the even and odd lanes
       by two vpmuludq. The scalar rounds took 9 ms for the 2M words of 1M normals. */
    #if defined(__AVX512F__)
    #include <immintrin.h>
    #define TL_PHILOX_VEC 1
    static inline __m512i philox_mulhilo(__m512i x, __m512i m, __m512i* lo) {
        __m512i even = _mm512_mul_epu32(x, m);
        __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(x, 32), m);
        *lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
        return _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
    }
    /* the 64 words of blocks b .. b+15 (each taken mod 2^62) in stream order */
    static void philox16(uint64_t b, uint64_t seed, uint32_t* out) {
        uint32_t lo32[16], hi32[16];
        for (int j = 0; j < 16; j++) {
            uint64_t c = (b + (uint64_t)j) & PHILOX_BLOCK_MASK;
            lo32[j] = (uint32_t)c;
            hi32[j] = (uint32_t)(c >> 32);
        }
        __m512i x0 = _mm512_loadu_si512(lo32), x1 = _mm512_loadu_si512(hi32);
        __m512i x2 = _mm512_setzero_si512(), x3 = _mm512_setzero_si512(), l0, l1;
        __m512i k0 = _mm512_set1_epi32((int)(uint32_t)seed);
        __m512i k1 = _mm512_set1_epi32((int)(uint32_t)(seed >> 32));
        const __m512i m0 = _mm512_set1_epi32((int)0xD2511F53u);
        const __m512i m1 = _mm512_set1_epi32((int)0xCD9E8D57u);
        const __m512i w0 = _mm512_set1_epi32((int)0x9E3779B9u);
        const __m512i w1 = _mm512_set1_epi32((int)0xBB67AE85u);
        for (int r = 0; r < 10; r++) {
            __m512i h0 = philox_mulhilo(x0, m0, &l0), h1 = philox_mulhilo(x2, m1, &l1);
            x0 = _mm512_xor_si512(_mm512_xor_si512(h1, x1), k0);
            x2 = _mm512_xor_si512(_mm512_xor_si512(h0, x3), k1);
            x1 = l1;
            x3 = l0;
            k0 = _mm512_add_epi32(k0, w0);
            k1 = _mm512_add_epi32(k1, w1);
        }
        /* (x0, x1, x2, x3) of block j are words 4j .. 4j+3: a 4x16 transpose */
        __m512i a = _mm512_unpacklo_epi32(x0, x1), bb = _mm512_unpacklo_epi32(x2, x3);
        __m512i c = _mm512_unpackhi_epi32(x0, x1), d = _mm512_unpackhi_epi32(x2, x3);
        __m512i t0 = _mm512_unpacklo_epi64(a, bb), t1 = _mm512_unpackhi_epi64(a, bb);
        __m512i t2 = _mm512_unpacklo_epi64(c, d), t3 = _mm512_unpackhi_epi64(c, d);
        __m512i u0 = _mm512_shuffle_i32x4(t0, t1, 0x44), u1 = _mm512_shuffle_i32x4(t2, t3, 0x44);
        __m512i u2 = _mm512_shuffle_i32x4(t0, t1, 0xEE), u3 = _mm512_shuffle_i32x4(t2, t3, 0xEE);
        _mm512_storeu_si512(out, _mm512_shuffle_i32x4(u0, u1, 0x88));
        _mm512_storeu_si512(out + 16, _mm512_shuffle_i32x4(u0, u1, 0xDD));
        _mm512_storeu_si512(out + 32, _mm512_shuffle_i32x4(u2, u3, 0x88));
        _mm512_storeu_si512(out + 48, _mm512_shuffle_i32x4(u2, u3, 0xDD));
    }
    /* Box-Muller on 16 (float32) or 8 (float64) pairs at once with libmvec's log, sin and
       cos: scalar logf and sincosf took 7 ms for 1M normals. Every pair goes through the
       vector functions, a short last group padded, so a number never depends on where it
       falls in a request (the slice tests). w: the pairs' words; out[k] for slots k - s in
       [0, n). */
    __m512 _ZGVeN16v_logf(__m512);
    __m512 _ZGVeN16v_sinf(__m512);
    __m512 _ZGVeN16v_cosf(__m512);
    __m512d _ZGVeN8v_log(__m512d);
    __m512d _ZGVeN8v_sin(__m512d);
    __m512d _ZGVeN8v_cos(__m512d);
    static void normal16_float(const uint32_t* w, int64_t p, int64_t npairs, int64_t s,
                               float* out, int64_t n) {
        uint32_t w1[16] = {0}, w2[16] = {0};
        float zc[16], zs[16];
        int64_t m = npairs - p < 16 ? npairs - p : 16, j;
        for (j = 0; j < m; j++) { w1[j] = w[2 * (p + j)]; w2[j] = w[2 * (p + j) + 1]; }
        const __m512 unit = _mm512_set1_ps(5.9604644775390625e-08f);
        __m512i a = _mm512_srli_epi32(_mm512_loadu_si512(w1), 8);
        __m512i b = _mm512_srli_epi32(_mm512_loadu_si512(w2), 8);
        __m512 u1 = _mm512_mul_ps(_mm512_cvtepi32_ps(
            _mm512_sub_epi32(_mm512_set1_epi32(16777216), a)), unit);
        __m512 u2 = _mm512_mul_ps(_mm512_cvtepi32_ps(b), unit);
        __m512 r = _mm512_sqrt_ps(_mm512_mul_ps(_mm512_set1_ps(-2.0f), _ZGVeN16v_logf(u1)));
        __m512 t = _mm512_mul_ps(_mm512_set1_ps((float)6.283185307179586), u2);
        _mm512_storeu_ps(zc, _mm512_mul_ps(r, _ZGVeN16v_cosf(t)));
        _mm512_storeu_ps(zs, _mm512_mul_ps(r, _ZGVeN16v_sinf(t)));
        for (j = 0; j < m; j++) {
            int64_t k = 2 * (p + j) - s;
            if (k >= 0 && k < n) out[k] = zc[j];
            if (k + 1 >= 0 && k + 1 < n) out[k + 1] = zs[j];
        }
    }
    static void normal8_double(const uint32_t* w, int64_t p, int64_t npairs, int64_t s,
                               double* out, int64_t n) {
        double u1v[8], u2v[8], zc[8], zs[8];
        int64_t m = npairs - p < 8 ? npairs - p : 8, j;
        for (j = 0; j < 8; j++) {                       /* the padding: u1 = u2 = 1 */
            const uint32_t* q = w + 4 * (p + j);
            u1v[j] = j < m ? (9007199254740992.0 - ((double)(q[0] >> 5) * 67108864.0
                              + (double)(q[1] >> 6))) * 1.1102230246251565e-16 : 1.0;
            u2v[j] = j < m ? ((double)(q[2] >> 5) * 67108864.0 + (double)(q[3] >> 6))
                              * 1.1102230246251565e-16 : 1.0;
        }
        __m512d r = _mm512_sqrt_pd(_mm512_mul_pd(_mm512_set1_pd(-2.0),
                                                 _ZGVeN8v_log(_mm512_loadu_pd(u1v))));
        __m512d t = _mm512_mul_pd(_mm512_set1_pd(6.283185307179586), _mm512_loadu_pd(u2v));
        _mm512_storeu_pd(zc, _mm512_mul_pd(r, _ZGVeN8v_cos(t)));
        _mm512_storeu_pd(zs, _mm512_mul_pd(r, _ZGVeN8v_sin(t)));
        for (j = 0; j < m; j++) {
            int64_t k = 2 * (p + j) - s;
            if (k >= 0 && k < n) out[k] = zc[j];
            if (k + 1 >= 0 && k + 1 < n) out[k + 1] = zs[j];
        }
    }
    #else
    #define TL_PHILOX_VEC 0
    static void philox16(uint64_t b, uint64_t seed, uint32_t* out) { (void)b; (void)seed; (void)out; }
    static void normal16_float(const uint32_t* w, int64_t p, int64_t npairs, int64_t s,
                               float* out, int64_t n) {}
    static void normal8_double(const uint32_t* w, int64_t p, int64_t npairs, int64_t s,
                               double* out, int64_t n) {}
    #endif
    """
    int TL_PHILOX_VEC
    void philox16(uint64_t b, uint64_t seed, uint32_t* out) nogil
    void normal16_float(const uint32_t* w, int64_t p, int64_t npairs, int64_t s, float* out,
                        int64_t n) nogil
    void normal8_double(const uint32_t* w, int64_t p, int64_t npairs, int64_t s, double* out,
                        int64_t n) nogil


cdef inline void philox_block(uint64_t b, uint64_t seed, uint32_t* out) noexcept nogil:
    """The 4 words of counter (b & 0xffffffff, b >> 32, 0, 0) under key seed."""
    cdef uint32_t x0 = <uint32_t>b, x1 = <uint32_t>(b >> 32), x2 = 0, x3 = 0
    cdef uint32_t k0 = <uint32_t>seed, k1 = <uint32_t>(seed >> 32)
    cdef uint64_t p0, p1
    cdef int r
    for r in range(10):
        p0 = <uint64_t>x0 * <uint64_t>0xD2511F53
        p1 = <uint64_t>x2 * <uint64_t>0xCD9E8D57
        x0 = <uint32_t>(p1 >> 32) ^ x1 ^ k0
        x2 = <uint32_t>(p0 >> 32) ^ x3 ^ k1
        x1 = <uint32_t>p1
        x3 = <uint32_t>p0
        k0 = k0 + <uint32_t>0x9E3779B9
        k1 = k1 + <uint32_t>0xBB67AE85
    out[0] = x0
    out[1] = x1
    out[2] = x2
    out[3] = x3


cdef inline void one_block(uint64_t b0, Py_ssize_t i, Py_ssize_t lane0, Py_ssize_t count,
                           uint64_t seed, uint32_t* out) noexcept nogil:
    cdef uint32_t w[4]
    cdef Py_ssize_t lane, g
    philox_block((b0 + <uint64_t>i) & BLOCK_MASK, seed, w)
    for lane in range(4):
        g = i * 4 + lane - lane0
        if 0 <= g < count:
            out[g] = w[lane]


cdef void fill_words(uint64_t seed, uint64_t start, Py_ssize_t count, uint32_t* out,
                     int nt) noexcept nogil:
    """Words start .. start+count-1 of the stream on nt threads: the blocks wholly inside
    the request 16 at a time (philox16) where the build has AVX-512, the others one by one."""
    cdef uint64_t b0 = start >> 2
    cdef Py_ssize_t lane0 = <Py_ssize_t>(start & 3)
    cdef Py_ssize_t nblk = (lane0 + count + 3) >> 2
    cdef Py_ssize_t i, g, first = 1 if lane0 else 0, groups = 0, rest
    if TL_PHILOX_VEC and (lane0 + count) // 4 > first:
        groups = ((lane0 + count) // 4 - first) // 16
    for i in range(min(first, nblk)):
        one_block(b0, i, lane0, count, seed, out)
    rest = first + 16 * groups
    if nt > 1:
        for g in prange(groups, schedule="static", num_threads=nt):
            philox16(b0 + <uint64_t>(first + 16 * g), seed, out + (first + 16 * g) * 4 - lane0)
        for i in prange(rest, nblk, schedule="static", num_threads=nt):
            one_block(b0, i, lane0, count, seed, out)
    else:
        for g in range(groups):
            philox16(b0 + <uint64_t>(first + 16 * g), seed, out + (first + 16 * g) * 4 - lane0)
        for i in range(rest, nblk):
            one_block(b0, i, lane0, count, seed, out)


cdef inline int _threads(Py_ssize_t blocks):
    """The backend's thread count (the cores other processes leave free) for long requests:
    OpenMP's default team of every core took 3-4x longer beside a busy process."""
    return fastreduce.threads_now() if blocks >= PARALLEL_BLOCKS else 1


def words(seed, start, Py_ssize_t count):
    """uint32[count]: words start .. start+count-1 of the stream (seed, start taken mod 2**64)."""
    out = np.empty(max(count, 0), np.uint32)
    cdef uint32_t[::1] view = out
    cdef uint64_t key = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)
    cdef uint64_t first = <uint64_t>(int(start) & 0xFFFFFFFFFFFFFFFF)
    cdef int nt = _threads(count // 4)
    if count > 0:
        with nogil:
            fill_words(key, first, count, &view[0], nt)
    return out


def uniform_float32(seed, offset, float[::1] out):
    """out[j] = (word(offset + j) >> 8) * 2**-24: float32's 24 significand bits, exact."""
    cdef Py_ssize_t n = out.shape[0], j
    cdef uint32_t[::1] w = words(seed, offset, n)
    with nogil:
        for j in range(n):
            out[j] = <float>(w[j] >> 8) * <float>5.9604644775390625e-08


def uniform_float64(seed, offset, double[::1] out):
    """out[j] from words offset+2j, offset+2j+1: ((w0 >> 5) * 2**26 + (w1 >> 6)) * 2**-53."""
    cdef Py_ssize_t n = out.shape[0], j
    cdef uint32_t[::1] w = words(seed, offset, 2 * n)
    with nogil:
        for j in range(n):
            out[j] = (<double>(w[2 * j] >> 5) * 67108864.0 + <double>(w[2 * j + 1] >> 6)) \
                * 1.1102230246251565e-16


cdef extern from "math.h" nogil:
    void sincosf(float x, float* sin_out, float* cos_out)
    void sincos(double x, double* sin_out, double* cos_out)


cdef inline void put(float[::1] out, Py_ssize_t j, float value) noexcept nogil:
    if 0 <= j < out.shape[0]:
        out[j] = value


cdef inline void put64(double[::1] out, Py_ssize_t j, double value) noexcept nogil:
    if 0 <= j < out.shape[0]:
        out[j] = value


cdef inline void normal_pair32(const uint32_t[::1] w, Py_ssize_t p, Py_ssize_t s,
                               float[::1] out) noexcept nogil:
    """Pair p: words 2p (u1 = 1 - U) and 2p+1 (u2) give slots 2p (r cos t), 2p+1 (r sin t);
    slot k is number k - s of the request."""
    cdef float u1 = <float>(<uint32_t>16777216 - (w[2 * p] >> 8)) * <float>5.9604644775390625e-08
    cdef float u2 = <float>(w[2 * p + 1] >> 8) * <float>5.9604644775390625e-08
    cdef float r = sqrtf(<float>-2.0 * logf(u1)), sin_t, cos_t
    sincosf(<float>TWO_PI * u2, &sin_t, &cos_t)
    put(out, 2 * p - s, r * cos_t)
    put(out, 2 * p + 1 - s, r * sin_t)


cdef inline void normal_pair64(const uint32_t[::1] w, Py_ssize_t p, Py_ssize_t s,
                               double[::1] out) noexcept nogil:
    """As normal_pair32 with 2 words a number: pair p owns words 4p .. 4p+3."""
    cdef double u1 = (9007199254740992.0 - (<double>(w[4 * p] >> 5) * 67108864.0
                                            + <double>(w[4 * p + 1] >> 6))) * 1.1102230246251565e-16
    cdef double u2 = (<double>(w[4 * p + 2] >> 5) * 67108864.0
                      + <double>(w[4 * p + 3] >> 6)) * 1.1102230246251565e-16
    cdef double r = sqrt(-2.0 * log(u1)), sin_t, cos_t
    sincos(TWO_PI * u2, &sin_t, &cos_t)
    put64(out, 2 * p - s, r * cos_t)
    put64(out, 2 * p + 1 - s, r * sin_t)


def normal_float32(seed, offset, float[::1] out):
    """Box-Muller in float32 math on word pairs aligned to 2 words (philox.normal, k = 1):
    16 pairs at a time on libmvec in AVX-512 builds, libm's logf/sincosf otherwise."""
    cdef uint64_t off = <uint64_t>(int(offset) & 0xFFFFFFFFFFFFFFFF)
    cdef uint64_t p0 = off - off % 2
    cdef Py_ssize_t n = out.shape[0], s = <Py_ssize_t>(off - p0), p
    cdef Py_ssize_t npairs = (s + n + 1) // 2
    if n == 0:
        return
    cdef const uint32_t[::1] w = words(seed, p0, 2 * npairs)
    cdef int nt = _threads(npairs)
    with nogil:
        if TL_PHILOX_VEC and nt > 1:
            for p in prange((npairs + 15) // 16, schedule="static", num_threads=nt):
                normal16_float(&w[0], 16 * p, npairs, s, &out[0], n)
        elif TL_PHILOX_VEC:
            for p in range((npairs + 15) // 16):
                normal16_float(&w[0], 16 * p, npairs, s, &out[0], n)
        elif nt > 1:
            for p in prange(npairs, schedule="static", num_threads=nt):
                normal_pair32(w, p, s, out)
        else:
            for p in range(npairs):
                normal_pair32(w, p, s, out)


def normal_float64(seed, offset, double[::1] out):
    """Box-Muller in float64 math; each number has 2 words, a pair owns 4 aligned words: 8
    pairs at a time on libmvec in AVX-512 builds."""
    cdef uint64_t off = <uint64_t>(int(offset) & 0xFFFFFFFFFFFFFFFF)
    cdef uint64_t p0 = off - off % 4
    cdef Py_ssize_t n = out.shape[0], s = <Py_ssize_t>((off - p0) // 2), p
    cdef Py_ssize_t npairs = (s + n + 1) // 2
    if n == 0:
        return
    cdef const uint32_t[::1] w = words(seed, p0, 4 * npairs)
    cdef int nt = _threads(npairs)
    with nogil:
        if TL_PHILOX_VEC and nt > 1:
            for p in prange((npairs + 7) // 8, schedule="static", num_threads=nt):
                normal8_double(&w[0], 8 * p, npairs, s, &out[0], n)
        elif TL_PHILOX_VEC:
            for p in range((npairs + 7) // 8):
                normal8_double(&w[0], 8 * p, npairs, s, &out[0], n)
        elif nt > 1:
            for p in prange(npairs, schedule="static", num_threads=nt):
                normal_pair64(w, p, s, out)
        else:
            for p in range(npairs):
                normal_pair64(w, p, s, out)
