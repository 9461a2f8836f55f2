# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Philox4x32-10 in C: the word stream, uniforms and normals that philox.py specifies, at C
speed. The numpy reference took 80 array operations per request (10 rounds of 8), about
150 us for a single number (torch.rand(1) takes 2 us) and 4x torch's time for 1e5 numbers.

Uniforms and randint words are bit-exact with the reference; normals use the same words and
float32 (or float64) Box-Muller math with the C library's log/cos/sin, so they agree with the
reference to rounding, as the GPU backends do. Built without -ffast-math (setup.py
EXACT_MATH): a value must not depend on its position in a vectorized loop."""
from cython.parallel cimport prange
from libc.math cimport log, logf, sqrt, sqrtf
from libc.stdint cimport uint32_t, uint64_t

import numpy as np

cdef uint64_t BLOCK_MASK = (<uint64_t>1 << 62) - 1   # word index mod 2**64: block mod 2**62
cdef Py_ssize_t PARALLEL_BLOCKS = 1 << 14            # below this one thread beats a team
cdef double TWO_PI = 6.283185307179586


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


cdef void fill_words(uint64_t seed, uint64_t start, Py_ssize_t count,
                     uint32_t* out) noexcept nogil:
    """Words start .. start+count-1 of the stream."""
    cdef uint64_t b0 = start >> 2
    cdef Py_ssize_t lane0 = <Py_ssize_t>(start & 3)
    cdef Py_ssize_t nblk = (lane0 + count + 3) >> 2
    cdef Py_ssize_t i
    if nblk < PARALLEL_BLOCKS:
        for i in range(nblk):
            one_block(b0, i, lane0, count, seed, out)
    else:
        for i in prange(nblk, schedule="static"):
            one_block(b0, i, lane0, count, seed, out)


def words(seed, start, Py_ssize_t count):
    """uint32[count]: words start .. start+count-1 of the stream (seed, start taken mod 2**64)."""
    out = np.empty(max(count, 0), np.uint32)
    cdef uint32_t[::1] view = out
    cdef uint64_t key = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)
    cdef uint64_t first = <uint64_t>(int(start) & 0xFFFFFFFFFFFFFFFF)
    if count > 0:
        with nogil:
            fill_words(key, first, count, &view[0])
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
    """Box-Muller in float32 math on word pairs aligned to 2 words (philox.normal, k = 1)."""
    cdef uint64_t off = <uint64_t>(int(offset) & 0xFFFFFFFFFFFFFFFF)
    cdef uint64_t p0 = off - off % 2
    cdef Py_ssize_t n = out.shape[0], s = <Py_ssize_t>(off - p0), p
    cdef Py_ssize_t npairs = (s + n + 1) // 2
    cdef const uint32_t[::1] w = words(seed, p0, 2 * npairs)
    with nogil:
        if npairs < PARALLEL_BLOCKS:
            for p in range(npairs):
                normal_pair32(w, p, s, out)
        else:
            for p in prange(npairs, schedule="static"):
                normal_pair32(w, p, s, out)


def normal_float64(seed, offset, double[::1] out):
    """Box-Muller in float64 math; each number has 2 words, a pair owns 4 aligned words."""
    cdef uint64_t off = <uint64_t>(int(offset) & 0xFFFFFFFFFFFFFFFF)
    cdef uint64_t p0 = off - off % 4
    cdef Py_ssize_t n = out.shape[0], s = <Py_ssize_t>((off - p0) // 2), p
    cdef Py_ssize_t npairs = (s + n + 1) // 2
    cdef const uint32_t[::1] w = words(seed, p0, 4 * npairs)
    with nogil:
        if npairs < PARALLEL_BLOCKS:
            for p in range(npairs):
                normal_pair64(w, p, s, out)
        else:
            for p in prange(npairs, schedule="static"):
                normal_pair64(w, p, s, out)
