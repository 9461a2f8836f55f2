# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Fused scaled-dot-product attention, forward and backward (flash-attention style), for
float32/float64 on the CPU.

Forward: each task takes a block of BQ query rows of one (batch, head) and walks the keys in
blocks of BK: scores = scale * Q K^T (BLAS), mask, then an online softmax (running row max m
and sum l; the partial output is rescaled by exp(m_old - m_new)) and O += P V (BLAS). The
(L, S) score matrix exists only as one BQ x BK block per thread. Each row's log-sum-exp
m + log(l) is kept for the backward.

Backward: each task owns one (batch, key/value head) — with grouped-query attention, the
query heads that share it too — so dK, dV and dQ are written by one thread, no atomics. Per
(key block, query block) it recomputes P = exp(scale * Q K^T + mask - lse) and runs five
products: dV += P^T dO, dP = dO V^T, dS = P (dP - D) * scale (D = rowsum(dO * O)),
dK += dS^T Q, dQ += dS K.

Every operand is read, and every output written, at its own (batch, head, row) strides
(rows of unit stride): out and the gradients may be laid out as the multi-head code's
(B, L, H, E) projections are, so neither side copies heads in or out.

Masked scores are the finite NEG (a -inf in an additive mask is clamped to it): the module
is built with -ffast-math, under which gcc may assume no infinities. A row whose every key is
masked gives zeros (and zero gradients), as PyTorch's CPU kernels do; its lse is NEG.

BLAS is the library gemm.pyx bound (oneDNN's dnnl_sgemm for float32 where it runs float32
products, else numpy's OpenBLAS, MKL or scipy's), called single-threaded from each OpenMP
thread of the backend's one team, as gemm.pyx does. On the Xeon of docs/performance.md, one
thread, OpenBLAS spent 16% of the forward's time packing the 128x256x64 and 128x64x256
blocks (40% in its kernel); dnnl_sgemm reads blocks this small unpacked."""
import ctypes

import numpy as np
cimport numpy as cnp
cimport openmp
from cython.parallel cimport parallel, prange
from libc.stdint cimport int64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc

from tensorlib._C.tensor_impl cimport TensorImpl, host_array
from tensorlib_cpu import fastreduce, gemm

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #define ATTN_NEG_float (-1e30f)
    #define ATTN_NEG_double (-1e300)
    #include "vexp.h"
    /* r[j] = exp(r[j] - c) along a row of n, returning the row's sum, with every result
       below the smallest normal number (exponents under ATTN_FLUSH) written as 0. Subnormal
       probabilities took a microcode assist in each multiply that met them (the exp, the
       sum, P V in BLAS): an untrained projection's peaked scores ran the 16x4x64x64 forward
       at 4.6 ms against 0.52 for small ones. c is at least the row's max (and lse at least
       its log-sum), so a flushed term is below 2^-126 of a sum of at least 1. float32 takes
       vexp.h's AVX-512 exp where the build has it: libmvec's vector expf falls back to
       scalar calls for a vector with a lane far below 0 (masked keys, causal rows). */
    #define ATTN_FLUSH_float (-87.0f)
    #define ATTN_FLUSH_double (-708.0)
    #define DEFINE_ATTN_EXP_ROW(T, EXP)                                                       \\
    static inline T attn_exp_row_##T(T* r, Py_ssize_t n, T c) {                               \\
        T sum = 0;                                                                            \\
        _Pragma("omp simd reduction(+:sum)")                                                  \\
        for (Py_ssize_t j = 0; j < n; j++) {                                                  \\
            const T d = r[j] - c, e = d < ATTN_FLUSH_##T ? (T)0 : EXP(d);                     \\
            r[j] = e; sum += e;                                                               \\
        }                                                                                     \\
        return sum;                                                                           \\
    }
    #if TL_HAVE_VEXP
    static inline float attn_exp_row_float(float* r, Py_ssize_t n, float c) {
        const __m512 vc = _mm512_set1_ps(c), low = _mm512_set1_ps(ATTN_FLUSH_float);
        __m512 acc = _mm512_setzero_ps();
        Py_ssize_t j = 0;
        for (; j < n; j += 16) {
            const __mmask16 m = n - j >= 16 ? (__mmask16)0xFFFF
                                            : (__mmask16)((1u << (n - j)) - 1u);
            const __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, r + j), vc);
            const __m512 e = _mm512_maskz_mov_ps(
                _mm512_mask_cmp_ps_mask(m, d, low, _CMP_GE_OQ), tl_exp16(d));
            _mm512_mask_storeu_ps(r + j, m, e);
            acc = _mm512_add_ps(acc, e);
        }
        return _mm512_reduce_add_ps(acc);
    }
    #else
    DEFINE_ATTN_EXP_ROW(float, expf)
    #endif
    DEFINE_ATTN_EXP_ROW(double, exp)

    #define DEFINE_ATTENTION(T, EXP, LOG)                                                      \\
    /* mask a (nq, nk) score block whose first row/column are query i0 / key j0 */            \\
    static void attn_mask_##T(T* s, Py_ssize_t nq, Py_ssize_t nk, Py_ssize_t lds,             \\
                              const T* add, const unsigned char* keep, Py_ssize_t msl,        \\
                              Py_ssize_t mss, int causal, Py_ssize_t i0, Py_ssize_t j0) {     \\
        const T neg = ATTN_NEG_##T; Py_ssize_t i, j;                                          \\
        for (i = 0; i < nq; i++) {                                                            \\
            T* r = s + i * lds;                                                               \\
            if (add) {                                                                        \\
                const T* a = add + i * msl;                                                   \\
                if (mss == 1) { _Pragma("omp simd") for (j = 0; j < nk; j++) r[j] += a[j]; }  \\
                else { for (j = 0; j < nk; j++) r[j] += a[j * mss]; }                         \\
                _Pragma("omp simd") for (j = 0; j < nk; j++) r[j] = r[j] < neg ? neg : r[j];  \\
            }                                                                                 \\
            if (keep) {                                                                       \\
                const unsigned char* k = keep + i * msl;                                      \\
                for (j = 0; j < nk; j++) if (!k[j * mss]) r[j] = neg;                         \\
            }                                                                                 \\
            if (causal) {                                                                     \\
                Py_ssize_t lim = i0 + i - j0 + 1;                                             \\
                for (j = lim < 0 ? 0 : lim; j < nk; j++) r[j] = neg;                          \\
            }                                                                                 \\
        }                                                                                     \\
    }                                                                                         \\
    /* online softmax step: s becomes exp(s - m_new); l, m and the output rows are updated */ \\
    static void attn_online_##T(T* s, Py_ssize_t nq, Py_ssize_t nk, Py_ssize_t lds, T* m,     \\
                                T* l, T* o, Py_ssize_t ldo, Py_ssize_t ev) {                  \\
        const T half = ATTN_NEG_##T / 2; Py_ssize_t i, j;                                     \\
        for (i = 0; i < nq; i++) {                                                            \\
            T* r = s + i * lds; T mx = m[i];                                                  \\
            for (j = 0; j < nk; j++) mx = r[j] > mx ? r[j] : mx;                              \\
            if (mx <= half) { memset(r, 0, nk * sizeof(T)); continue; }                       \\
            /* no earlier block had a key: nothing to rescale (exp's underflow is slow) */    \\
            const T alpha = m[i] <= half ? (T)0 : EXP(m[i] - mx);                             \\
            const T sum = attn_exp_row_##T(r, nk, mx);                                        \\
            l[i] = l[i] * alpha + sum; m[i] = mx;                                             \\
            if (alpha != (T)1) { T* orow = o + i * ldo;                                       \\
                _Pragma("omp simd") for (j = 0; j < ev; j++) orow[j] *= alpha; }              \\
        }                                                                                     \\
    }                                                                                         \\
    static void attn_finish_##T(T* o, Py_ssize_t nq, Py_ssize_t ldo, Py_ssize_t ev,           \\
                                const T* m, const T* l, T* lse) {                             \\
        Py_ssize_t i, j;                                                                      \\
        for (i = 0; i < nq; i++) {                                                            \\
            if (l[i] > 0) { const T inv = (T)1 / l[i]; T* orow = o + i * ldo;                 \\
                _Pragma("omp simd") for (j = 0; j < ev; j++) orow[j] *= inv; }                \\
        }                                                                                     \\
        /* a loop of its own, so that the logs are libmvec's vector calls */                  \\
        _Pragma("omp simd") for (i = 0; i < nq; i++)                                          \\
            lse[i] = l[i] > 0 ? m[i] + LOG(l[i]) : ATTN_NEG_##T;                              \\
    }                                                                                         \\
    /* backward: s (masked scores) becomes P = exp(s - lse) */                                \\
    static void attn_probs_##T(T* s, Py_ssize_t nq, Py_ssize_t nk, Py_ssize_t lds,            \\
                               const T* lse) {                                                \\
        const T half = ATTN_NEG_##T / 2; Py_ssize_t i;                                        \\
        for (i = 0; i < nq; i++) {                                                            \\
            T* r = s + i * lds; const T shift = lse[i];                                       \\
            if (shift <= half) { memset(r, 0, nk * sizeof(T)); continue; }                    \\
            (void)attn_exp_row_##T(r, nk, shift);                                             \\
        }                                                                                     \\
    }                                                                                         \\
    /* p becomes dS = p * (dp - D) * scale */                                                 \\
    static void attn_dscores_##T(T* p, const T* dp, Py_ssize_t nq, Py_ssize_t nk,             \\
                                 Py_ssize_t ld, const T* d, T scale) {                        \\
        Py_ssize_t i, j;                                                                      \\
        for (i = 0; i < nq; i++) {                                                            \\
            T* r = p + i * ld; const T* g = dp + i * ld; const T di = d[i];                   \\
            _Pragma("omp simd") for (j = 0; j < nk; j++) r[j] = r[j] * (g[j] - di) * scale;   \\
        }                                                                                     \\
    }                                                                                         \\
    /* D[i] = sum_c dO[i, c] * O[i, c] over rows of ev (row strides lda, ldb) */              \\
    static void attn_rowdot_##T(const T* a, Py_ssize_t lda, const T* b, Py_ssize_t ldb,       \\
                                Py_ssize_t n, Py_ssize_t ev, T* d) {                          \\
        Py_ssize_t i, j;                                                                      \\
        for (i = 0; i < n; i++) { T acc = 0; const T* x = a + i * lda; const T* y = b + i * ldb; \\
            _Pragma("omp simd reduction(+:acc)") for (j = 0; j < ev; j++) acc += x[j] * y[j]; \\
            d[i] = acc; }                                                                     \\
    }
    #include <string.h>
    /* zero n rows of ev elements, ld apart */
    static void attn_zero_rows(void* p, Py_ssize_t n, Py_ssize_t ld, Py_ssize_t ev,
                               size_t item) {
        if (ld == ev) { memset(p, 0, (size_t)(n * ev) * item); return; }
        for (Py_ssize_t i = 0; i < n; i++) memset((char*)p + (size_t)(i * ld) * item, 0,
                                                  (size_t)ev * item);
    }
    DEFINE_ATTENTION(float, expf, logf)
    DEFINE_ATTENTION(double, exp, log)
    """
    void attn_mask_float(float* s, Py_ssize_t nq, Py_ssize_t nk, Py_ssize_t lds,
                         const float* add, const unsigned char* keep, Py_ssize_t msl,
                         Py_ssize_t mss, int causal, Py_ssize_t i0, Py_ssize_t j0) nogil
    void attn_mask_double(double* s, Py_ssize_t nq, Py_ssize_t nk, Py_ssize_t lds,
                          const double* add, const unsigned char* keep, Py_ssize_t msl,
                          Py_ssize_t mss, int causal, Py_ssize_t i0, Py_ssize_t j0) nogil
    void attn_online_float(float* s, Py_ssize_t nq, Py_ssize_t nk, Py_ssize_t lds, float* m,
                           float* l, float* o, Py_ssize_t ldo, Py_ssize_t ev) nogil
    void attn_online_double(double* s, Py_ssize_t nq, Py_ssize_t nk, Py_ssize_t lds,
                            double* m, double* l, double* o, Py_ssize_t ldo,
                            Py_ssize_t ev) nogil
    void attn_finish_float(float* o, Py_ssize_t nq, Py_ssize_t ldo, Py_ssize_t ev,
                           const float* m, const float* l, float* lse) nogil
    void attn_finish_double(double* o, Py_ssize_t nq, Py_ssize_t ldo, Py_ssize_t ev,
                            const double* m, const double* l, double* lse) nogil
    void attn_probs_float(float* s, Py_ssize_t nq, Py_ssize_t nk, Py_ssize_t lds,
                          const float* lse) nogil
    void attn_probs_double(double* s, Py_ssize_t nq, Py_ssize_t nk, Py_ssize_t lds,
                           const double* lse) nogil
    void attn_dscores_float(float* p, const float* dp, Py_ssize_t nq, Py_ssize_t nk,
                            Py_ssize_t ld, const float* d, float scale) nogil
    void attn_dscores_double(double* p, const double* dp, Py_ssize_t nq, Py_ssize_t nk,
                             Py_ssize_t ld, const double* d, double scale) nogil
    void attn_rowdot_float(const float* a, Py_ssize_t lda, const float* b, Py_ssize_t ldb,
                           Py_ssize_t n, Py_ssize_t ev, float* d) nogil
    void attn_rowdot_double(const double* a, Py_ssize_t lda, const double* b,
                            Py_ssize_t ldb, Py_ssize_t n, Py_ssize_t ev, double* d) nogil
    void attn_zero_rows(void* p, Py_ssize_t n, Py_ssize_t ld, Py_ssize_t ev,
                        size_t item) nogil

# Block sizes (queries x keys), forward and backward: a 128 x 512 score block (256 KB in
# float32) and the backward's two 128 x 256 blocks stay in L2 beside their K/V rows; smaller
# blocks lost to BLAS call overhead here (AMD EPYC, 2 threads).
# Below this many multiply-adds (one forward) one thread does the whole call.
cdef enum:
    PARALLEL_MIN_MACS = 1 << 20
cdef enum:
    BQ = 128
    BK = 512
    BQB = 128
    BKB = 256

ctypedef fused real:
    float
    double


# ---- BLAS: the pointers gemm.pyx bound (see its docstring), resolved again here ------------
ctypedef void (*sgemm64_t)(const char*, const char*, const int64_t*, const int64_t*,
                           const int64_t*, const float*, const float*, const int64_t*,
                           const float*, const int64_t*, const float*, float*,
                           const int64_t*) noexcept nogil
ctypedef void (*dgemm64_t)(const char*, const char*, const int64_t*, const int64_t*,
                           const int64_t*, const double*, const double*, const int64_t*,
                           const double*, const int64_t*, const double*, double*,
                           const int64_t*) noexcept nogil
ctypedef void (*sgemm32_t)(char*, char*, int*, int*, int*, float*, float*, int*, float*, int*,
                           float*, float*, int*) noexcept nogil
ctypedef void (*dgemm32_t)(char*, char*, int*, int*, int*, double*, double*, int*, double*,
                           int*, double*, double*, int*) noexcept nogil
ctypedef void (*set_threads_t)(int) noexcept nogil
ctypedef int (*get_threads_t)() noexcept nogil
# oneDNN's row-major sgemm (C = alpha op(A) op(B) + beta C; returns a status)
ctypedef int (*dnnl_sgemm_t)(char, char, int64_t, int64_t, int64_t, float, const float*,
                             int64_t, const float*, int64_t, float, float*,
                             int64_t) noexcept nogil

cdef dnnl_sgemm_t _dnnl_sgemm = NULL
cdef sgemm64_t _sgemm64 = NULL
cdef dgemm64_t _dgemm64 = NULL
cdef sgemm32_t _sgemm32 = NULL
cdef dgemm32_t _dgemm32 = NULL
cdef set_threads_t _set_threads = NULL
cdef get_threads_t _get_threads = NULL
_bound = None


def _bind_blas():
    """Point our GEMM at the library gemm.pyx uses now (it may be switched by use_blas)."""
    global _sgemm64, _dgemm64, _sgemm32, _dgemm32, _set_threads, _get_threads, _bound
    global _dnnl_sgemm
    if _bound == (gemm.LIBRARY, gemm.BLAS):
        return
    _dnnl_sgemm = <dnnl_sgemm_t><uintptr_t>(gemm.dnnl_sgemm_address() or 0)
    _sgemm64 = NULL
    _dgemm64 = NULL
    _sgemm32 = NULL
    _dgemm32 = NULL
    _set_threads = NULL
    _get_threads = NULL
    if gemm.BLAS == "scipy.linalg.cython_blas":
        _sgemm32 = <sgemm32_t><uintptr_t>gemm._cython_blas("sgemm")
        _dgemm32 = <dgemm32_t><uintptr_t>gemm._cython_blas("dgemm")
    elif gemm.LIBRARY == "mkl":
        # MKL's ILP64 Fortran GEMMs, on the sequential layer gemm.pyx set: no count to pin
        lib = gemm._open_mkl()
        found = [gemm._address(lib, n) for n in ("sgemm_64", "dgemm_64")]
        if not all(found):
            raise RuntimeError(f"attention_kernels: no sgemm_64/dgemm_64 in {gemm.BLAS}")
        _sgemm64 = <sgemm64_t><uintptr_t>found[0]
        _dgemm64 = <dgemm64_t><uintptr_t>found[1]
    else:
        lib = ctypes.CDLL(gemm.BLAS)
        for names in gemm._NUMPY_OPENBLAS_NAMES:
            found = [gemm._address(lib, n) for n in names]
            if all(found):
                _sgemm64 = <sgemm64_t><uintptr_t>found[0]
                _dgemm64 = <dgemm64_t><uintptr_t>found[1]
                _set_threads = <set_threads_t><uintptr_t>found[2]
                _get_threads = <get_threads_t><uintptr_t>found[3]
                break
        else:
            raise RuntimeError(f"attention_kernels: no GEMM symbols found in {gemm.BLAS}")
    _bound = (gemm.LIBRARY, gemm.BLAS)


cdef inline (int, int) _single_threaded_blas() noexcept nogil:
    """Every GEMM call runs on its calling thread: numpy's OpenBLAS set to one thread, and
    the OpenMP count to one, which dnnl_sgemm reads inside a one-thread team (inside a team
    of several it runs sequentially by itself). Returns both counts to restore."""
    cdef int blas = 1, omp = openmp.omp_get_max_threads()
    if _get_threads != NULL:
        blas = _get_threads()
        _set_threads(1)
    openmp.omp_set_num_threads(1)
    return blas, omp


cdef inline void _restore_threads(int blas, int omp) noexcept nogil:
    if _set_threads != NULL and blas != 1:
        _set_threads(blas)
    openmp.omp_set_num_threads(omp)


cdef inline void _mm(char ta, char tb, Py_ssize_t m, Py_ssize_t n, Py_ssize_t k, real alpha,
                     const real* a, Py_ssize_t lda, const real* b, Py_ssize_t ldb, real beta,
                     real* c, Py_ssize_t ldc) noexcept nogil:
    """Row-major C (m, n) = alpha op(A) op(B) + beta C (as column-major C^T = B^T A^T)."""
    cdef int64_t m64 = m, n64 = n, k64 = k, lda64 = lda, ldb64 = ldb, ldc64 = ldc
    cdef int m32 = <int>m, n32 = <int>n, k32 = <int>k
    cdef int lda32 = <int>lda, ldb32 = <int>ldb, ldc32 = <int>ldc
    if m <= 0 or n <= 0:
        return
    if real is float:
        if _dnnl_sgemm != NULL:
            _dnnl_sgemm(ta, tb, m64, n64, k64, alpha, a, lda64, b, ldb64, beta, c, ldc64)
        elif _sgemm64 != NULL:
            _sgemm64(&tb, &ta, &n64, &m64, &k64, &alpha, b, &ldb64, a, &lda64, &beta, c,
                     &ldc64)
        else:
            _sgemm32(&tb, &ta, &n32, &m32, &k32, &alpha, <float*>b, &ldb32, <float*>a,
                     &lda32, &beta, c, &ldc32)
    else:
        if _dgemm64 != NULL:
            _dgemm64(&tb, &ta, &n64, &m64, &k64, &alpha, b, &ldb64, a, &lda64, &beta, c,
                     &ldc64)
        else:
            _dgemm32(&tb, &ta, &n32, &m32, &k32, &alpha, <double*>b, &ldb32, <double*>a,
                     &lda32, &beta, c, &ldc32)


# ---- the C helpers by element type ---------------------------------------------------------
cdef inline void _mask(real* s, Py_ssize_t nq, Py_ssize_t nk, Py_ssize_t lds, const real* add,
                       const unsigned char* keep, Py_ssize_t msl, Py_ssize_t mss, int causal,
                       Py_ssize_t i0, Py_ssize_t j0) noexcept nogil:
    if real is float:
        attn_mask_float(s, nq, nk, lds, add, keep, msl, mss, causal, i0, j0)
    else:
        attn_mask_double(s, nq, nk, lds, add, keep, msl, mss, causal, i0, j0)


cdef struct Layout:
    Py_ssize_t B, H, Hk, L, S, E, Ev
    # element strides of (batch, head, row); the last dim's is 1
    Py_ssize_t qb, qh, ql, kb, kh, kl, vb, vh, vl     # inputs
    Py_ssize_t ob, oh, ol, gb, gh, gl                 # out and grad_out (B, H, L, Ev)
    Py_ssize_t dqb, dqh, dql, dkb, dkh, dkl, dvb, dvh, dvl   # the gradients
    Py_ssize_t mb, mh, ml, ms                         # of the mask expanded to (B, H, L, S)
    int causal


cdef inline const unsigned char* _keep_at(const unsigned char* keep, Layout* g, Py_ssize_t b,
                                          Py_ssize_t h, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    if keep == NULL:
        return NULL
    return keep + b * g.mb + h * g.mh + i * g.ml + j * g.ms


cdef inline const real* _add_at(const real* add, Layout* g, Py_ssize_t b, Py_ssize_t h,
                                Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    if add == NULL:
        return NULL
    return add + b * g.mb + h * g.mh + i * g.ml + j * g.ms


# The forward's and backward's tasks are handed out in runs of consecutive ones, about this
# many runs a thread: a (B, L, H, E) output (multi-head attention's layout) has the heads of a
# row side by side, and two threads on neighbouring heads wrote lines the other's stores had
# just prefetched (16x4x64x64 from a packed projection: 770 us on 2 threads, 1008 on one).
# In runs each thread has rows of its own (533 us), and still takes a run as it comes free.
cdef enum:
    TASK_RUNS_PER_THREAD = 4


cdef void _forward(const real* q, const real* k, const real* v, real* o, real* lse,
                   const real* add, const unsigned char* keep, Layout* g, real scale,
                   int nt) noexcept nogil:
    cdef Py_ssize_t nqb = (g.L + BQ - 1) // BQ, group = g.H // g.Hk
    cdef Py_ssize_t bk = min(<Py_ssize_t>BK, g.S)
    cdef Py_ssize_t u, b, h, i0, nq, j0, nk, i
    # tasks (batch, head, query block) in runs of consecutive ones (TASK_RUNS_PER_THREAD)
    cdef Py_ssize_t chunk = max(1, g.B * g.H * nqb // (TASK_RUNS_PER_THREAD * nt))
    cdef real* s
    cdef real* m
    cdef real* l
    cdef real* orow
    cdef const real* qp
    cdef const real* kp
    cdef const real* vp
    with parallel(num_threads=nt):
        s = <real*>malloc(BQ * bk * sizeof(real))
        m = <real*>malloc(BQ * sizeof(real))
        l = <real*>malloc(BQ * sizeof(real))
        for u in prange(g.B * g.H * nqb, schedule="dynamic", chunksize=chunk):
            b = u // (g.H * nqb)
            h = (u // nqb) % g.H
            i0 = (u % nqb) * BQ
            nq = min(<Py_ssize_t>BQ, g.L - i0)
            qp = q + b * g.qb + h * g.qh + i0 * g.ql
            kp = k + b * g.kb + (h // group) * g.kh
            vp = v + b * g.vb + (h // group) * g.vh
            orow = o + b * g.ob + h * g.oh + i0 * g.ol
            if g.S == 0:
                attn_zero_rows(orow, nq, g.ol, g.Ev, sizeof(real))
            for i in range(nq):
                m[i] = -1e30 if real is float else -1e300
                l[i] = 0
            # the first key block writes the output rows (beta 0: BLAS reads nothing of
            # them), so they are neither zeroed first nor rescaled (ev 0) by its softmax step
            j0 = 0
            while j0 < g.S and not (g.causal and j0 > i0 + nq - 1):
                nk = min(bk, g.S - j0)
                _mm[real](b'N', b'T', nq, nk, g.E, scale, qp, g.ql, kp + j0 * g.kl, g.kl,
                          0, s, bk)
                _mask(s, nq, nk, bk, _add_at(add, g, b, h, i0, j0),
                      _keep_at(keep, g, b, h, i0, j0), g.ml, g.ms, g.causal, i0, j0)
                if real is float:
                    attn_online_float(s, nq, nk, bk, m, l, orow, g.ol, g.Ev if j0 else 0)
                else:
                    attn_online_double(s, nq, nk, bk, m, l, orow, g.ol, g.Ev if j0 else 0)
                _mm[real](b'N', b'N', nq, g.Ev, nk, 1, s, bk, vp + j0 * g.vl, g.vl,
                          1 if j0 else 0, orow, g.ol)
                j0 = j0 + bk
            if real is float:
                attn_finish_float(orow, nq, g.ol, g.Ev, m, l, lse + (b * g.H + h) * g.L + i0)
            else:
                attn_finish_double(orow, nq, g.ol, g.Ev, m, l,
                                   lse + (b * g.H + h) * g.L + i0)
        free(s)
        free(m)
        free(l)


cdef void _backward(const real* q, const real* k, const real* v, const real* o,
                    const real* go, const real* lse, real* dq, real* dk, real* dv,
                    const real* add, const unsigned char* keep, Layout* g, real scale,
                    int nt) noexcept nogil:
    """dq, dk, dv: (B, H, L, E), (B, Hk, S, E), (B, Hk, S, Ev) at the Layout's strides; each
    task zeroes the rows it owns before summing into them (in its cache, on its thread).
    With fewer (batch, key/value head) pairs than threads, each key block is a task of its
    own and dq is summed from one private (B, H, L, E) copy per thread."""
    cdef Py_ssize_t group = g.H // g.Hk, bk = min(<Py_ssize_t>BKB, g.S)
    cdef Py_ssize_t nkb = (g.S + bk - 1) // bk
    cdef Py_ssize_t split = nkb if g.B * g.Hk < nt and nkb > 1 else 1
    cdef Py_ssize_t chunk = max(1, g.B * g.Hk * split // (TASK_RUNS_PER_THREAD * nt))
    cdef Py_ssize_t dq_size = g.B * g.H * g.L * g.E, r, c
    cdef Py_ssize_t u, b, hk, h, i0, nq, j0, j_end, nk, row
    cdef Py_ssize_t qrow_b, qrow_h, qrow_l
    cdef int t
    cdef real acc
    cdef real* parts = NULL
    cdef real* dq_mine
    cdef real* p
    cdef real* dp
    cdef real* d
    cdef real* dst
    cdef const real* qp
    cdef const real* kp
    cdef const real* vp
    cdef const real* gop
    cdef const real* op
    cdef real* dqp
    cdef real* dkp
    cdef real* dvp
    if split > 1:
        parts = <real*>calloc(nt * dq_size, sizeof(real))
    # where dq's rows are: the private copies are dense (B, H, L, E)
    qrow_b, qrow_h, qrow_l = g.dqb, g.dqh, g.dql
    if split > 1:
        qrow_b, qrow_h, qrow_l = g.H * g.L * g.E, g.L * g.E, g.E
    with parallel(num_threads=nt):
        p = <real*>malloc(BQB * bk * sizeof(real))
        dp = <real*>malloc(BQB * bk * sizeof(real))
        d = <real*>malloc(g.L * sizeof(real))
        dq_mine = dq if split == 1 else parts + openmp.omp_get_thread_num() * dq_size
        for u in prange(g.B * g.Hk * split, schedule="dynamic", chunksize=chunk):
            b = u // (g.Hk * split)
            hk = (u // split) % g.Hk
            kp = k + b * g.kb + hk * g.kh
            vp = v + b * g.vb + hk * g.vh
            dkp = dk + b * g.dkb + hk * g.dkh
            dvp = dv + b * g.dvb + hk * g.dvh
            j0 = 0 if split == 1 else (u % split) * bk
            j_end = g.S if split == 1 else min(g.S, j0 + bk)
            attn_zero_rows(dkp + j0 * g.dkl, j_end - j0, g.dkl, g.E, sizeof(real))
            attn_zero_rows(dvp + j0 * g.dvl, j_end - j0, g.dvl, g.Ev, sizeof(real))
            for h in range(hk * group, (hk + 1) * group):
                row = (b * g.H + h) * g.L
                qp = q + b * g.qb + h * g.qh
                gop = go + b * g.gb + h * g.gh
                op = o + b * g.ob + h * g.oh
                dqp = dq_mine + b * qrow_b + h * qrow_h
                if split == 1:
                    attn_zero_rows(dqp, g.L, qrow_l, g.E, sizeof(real))
                if real is float:
                    attn_rowdot_float(gop, g.gl, op, g.ol, g.L, g.Ev, d)
                else:
                    attn_rowdot_double(gop, g.gl, op, g.ol, g.L, g.Ev, d)
                j0 = 0 if split == 1 else (u % split) * bk
                while j0 < j_end:
                    nk = min(bk, g.S - j0)
                    i0 = j0 if g.causal else 0    # earlier queries see none of these keys
                    while i0 < g.L:
                        nq = min(<Py_ssize_t>BQB, g.L - i0)
                        _mm[real](b'N', b'T', nq, nk, g.E, scale, qp + i0 * g.ql, g.ql,
                                  kp + j0 * g.kl, g.kl, 0, p, bk)
                        _mask(p, nq, nk, bk, _add_at(add, g, b, h, i0, j0),
                              _keep_at(keep, g, b, h, i0, j0), g.ml, g.ms, g.causal, i0, j0)
                        if real is float:
                            attn_probs_float(p, nq, nk, bk, lse + row + i0)
                        else:
                            attn_probs_double(p, nq, nk, bk, lse + row + i0)
                        _mm[real](b'T', b'N', nk, g.Ev, nq, 1, p, bk, gop + i0 * g.gl, g.gl,
                                  1, dvp + j0 * g.dvl, g.dvl)
                        _mm[real](b'N', b'T', nq, nk, g.Ev, 1, gop + i0 * g.gl, g.gl,
                                  vp + j0 * g.vl, g.vl, 0, dp, bk)
                        if real is float:
                            attn_dscores_float(p, dp, nq, nk, bk, d + i0, scale)
                        else:
                            attn_dscores_double(p, dp, nq, nk, bk, d + i0, scale)
                        _mm[real](b'T', b'N', nk, g.E, nq, 1, p, bk, qp + i0 * g.ql, g.ql, 1,
                                  dkp + j0 * g.dkl, g.dkl)
                        _mm[real](b'N', b'N', nq, g.E, nk, 1, p, bk, kp + j0 * g.kl, g.kl, 1,
                                  dqp + i0 * qrow_l, qrow_l)
                        i0 = i0 + nq
                    j0 = j0 + bk
        free(p)
        free(dp)
        free(d)
    if split > 1:
        for r in prange(g.B * g.H * g.L, num_threads=nt, schedule="static"):
            dst = dq + (r // (g.H * g.L)) * g.dqb + ((r // g.L) % g.H) * g.dqh + (r % g.L) * g.dql
            for c in range(g.E):
                acc = 0
                for t in range(nt):
                    acc = acc + parts[t * dq_size + r * g.E + c]
                dst[c] = acc
        free(parts)


# ---- the kernels (NOTE [ Fused SDPA kernels ] in nn/_functional/attention_fused.py) -------
cdef cnp.ndarray _rows(TensorImpl t):
    """The host array of t as BLAS reads its (rows, features) blocks: a unit stride on the
    last dim and a row stride at least as long as a row (a copy only if needed)."""
    cdef cnp.ndarray a = host_array(t)
    cdef Py_ssize_t n = a.ndim, item = a.itemsize
    if ((a.shape[n - 1] > 1 and a.strides[n - 1] != item)
            or (a.shape[n - 2] > 1 and a.strides[n - 2] < a.shape[n - 1] * item)):
        a = np.ascontiguousarray(a)
    return a


cdef inline void _strides(cnp.ndarray a, Py_ssize_t* sb, Py_ssize_t* sh,
                         Py_ssize_t* sl) noexcept:
    """(batch, head, row) element strides of a (B, H, rows, cols) array; a single row gets
    the row stride of a dense one (BLAS checks it against the row length)."""
    cdef Py_ssize_t item = a.itemsize
    sb[0], sh[0], sl[0] = a.strides[0] // item, a.strides[1] // item, a.strides[2] // item
    if a.shape[2] == 1:
        sl[0] = max(a.shape[3], 1)


cdef void _layout(Layout* g, cnp.ndarray q, cnp.ndarray k, cnp.ndarray v, mask, int causal):
    g.B, g.H, g.L, g.E = q.shape[0], q.shape[1], q.shape[2], q.shape[3]
    g.Hk, g.S, g.Ev = k.shape[1], k.shape[2], v.shape[3]
    _strides(q, &g.qb, &g.qh, &g.ql)
    _strides(k, &g.kb, &g.kh, &g.kl)
    _strides(v, &g.vb, &g.vh, &g.vl)
    g.mb = g.mh = g.ml = g.ms = 0
    if mask is not None:
        mi = mask.itemsize
        g.mb, g.mh, g.ml, g.ms = [s // mi for s in mask.strides]
    g.causal = causal


cdef cnp.ndarray _written(TensorImpl t, str name):
    """The host array of an output the kernel writes in place, as BLAS does: rows with a
    unit stride, at least a row apart (attention_fused.py allocates them so)."""
    cdef cnp.ndarray a = host_array(t)
    cdef Py_ssize_t item = a.itemsize
    if ((a.shape[3] > 1 and a.strides[3] != item)
            or (a.shape[2] > 1 and a.strides[2] < a.shape[3] * item)):
        raise ValueError(f"scaled_dot_product_attention kernel: {name} of shape "
                         f"{(<object>a).shape} and strides {(<object>a).strides} is not made of "
                         f"unit-stride rows")
    return a


cdef int _threads(Layout* g):
    """The backend's thread count, or one thread for a small problem: a parallel region
    whose second thread is descheduled (a busy machine) waits a whole time slice."""
    if <double>g.B * g.H * g.L * g.S * (g.E + g.Ev) < PARALLEL_MIN_MACS:
        return 1
    return fastreduce.threads_now()


def _mask_array(attn_mask, dtype):
    """(add pointer array, keep pointer array) of the expanded (B, H, L, S) mask."""
    if attn_mask is None:
        return None, None
    a = host_array(attn_mask)
    if a.dtype == np.bool_:
        return None, a.view(np.uint8)
    return (a if a.dtype == dtype else a.astype(dtype)), None


cdef inline void* _ptr(a):
    return NULL if a is None else cnp.PyArray_DATA(<cnp.ndarray>a)


def sdpa_forward(TensorImpl out, TensorImpl lse, TensorImpl query, TensorImpl key,
                 TensorImpl value, attn_mask, bint is_causal, double scale):
    """out (B, H, L, Ev), unit-stride rows in any order, and lse (B, H, L), contiguous, from
    query (B, H, L, E), key (B, Hk, S, E), value (B, Hk, S, Ev) (H a multiple of Hk) and
    attn_mask None or expanded to (B, H, L, S), bool (True: attend) or additive."""
    cdef cnp.ndarray q = _rows(query), k = _rows(key), v = _rows(value)
    cdef cnp.ndarray o = _written(out, "out"), ls = host_array(lse)
    add, keep = _mask_array(attn_mask, q.dtype)
    cdef Layout g
    _layout(&g, q, k, v, add if add is not None else keep, is_causal)
    _strides(o, &g.ob, &g.oh, &g.ol)
    cdef void* pq = cnp.PyArray_DATA(q)
    cdef void* pk = cnp.PyArray_DATA(k)
    cdef void* pv = cnp.PyArray_DATA(v)
    cdef void* po = cnp.PyArray_DATA(o)
    cdef void* pl = cnp.PyArray_DATA(ls)
    cdef void* pa = _ptr(add)
    cdef const unsigned char* pkeep = <const unsigned char*>_ptr(keep)
    cdef int nt = _threads(&g), before = 1, omp_before = 1
    cdef bint single = q.dtype == np.float32
    if g.B * g.H * g.L == 0:
        return
    if g.S == 0 or g.Ev == 0:
        o[...] = 0
        ls[...] = -1e30 if single else -1e300
        return
    _bind_blas()
    with nogil:
        before, omp_before = _single_threaded_blas()
        if single:
            _forward[float](<float*>pq, <float*>pk, <float*>pv, <float*>po, <float*>pl,
                            <float*>pa, pkeep, &g, <float>scale, nt)
        else:
            _forward[double](<double*>pq, <double*>pk, <double*>pv, <double*>po,
                             <double*>pl, <double*>pa, pkeep, &g, scale, nt)
        _restore_threads(before, omp_before)


def sdpa_backward(TensorImpl grad_query, TensorImpl grad_key, TensorImpl grad_value,
                  TensorImpl grad_out, TensorImpl query, TensorImpl key, TensorImpl value,
                  TensorImpl out, TensorImpl lse, attn_mask, bint is_causal, double scale):
    """grad_query/key/value, shaped as query, key, value with unit-stride rows in any order
    (every element is written), from grad_out (any strides) and the forward's out and lse."""
    cdef cnp.ndarray q = _rows(query), k = _rows(key), v = _rows(value)
    cdef cnp.ndarray go = _rows(grad_out), o = _rows(out), ls = host_array(lse)
    cdef cnp.ndarray dq = _written(grad_query, "grad_query")
    cdef cnp.ndarray dk = _written(grad_key, "grad_key")
    cdef cnp.ndarray dv = _written(grad_value, "grad_value")
    add, keep = _mask_array(attn_mask, q.dtype)
    cdef Layout g
    _layout(&g, q, k, v, add if add is not None else keep, is_causal)
    _strides(o, &g.ob, &g.oh, &g.ol)
    _strides(go, &g.gb, &g.gh, &g.gl)
    _strides(dq, &g.dqb, &g.dqh, &g.dql)
    _strides(dk, &g.dkb, &g.dkh, &g.dkl)
    _strides(dv, &g.dvb, &g.dvh, &g.dvl)
    cdef void* pq = cnp.PyArray_DATA(q)
    cdef void* pk = cnp.PyArray_DATA(k)
    cdef void* pv = cnp.PyArray_DATA(v)
    cdef void* po = cnp.PyArray_DATA(o)
    cdef void* pgo = cnp.PyArray_DATA(go)
    cdef void* pl = cnp.PyArray_DATA(ls)
    cdef void* pdq = cnp.PyArray_DATA(dq)
    cdef void* pdk = cnp.PyArray_DATA(dk)
    cdef void* pdv = cnp.PyArray_DATA(dv)
    cdef void* pa = _ptr(add)
    cdef const unsigned char* pkeep = <const unsigned char*>_ptr(keep)
    cdef int nt = _threads(&g), before = 1, omp_before = 1
    cdef bint single = q.dtype == np.float32
    if g.S == 0 or g.Ev == 0:
        dq[...] = 0
        dk[...] = 0
        dv[...] = 0
        return
    _bind_blas()
    with nogil:
        before, omp_before = _single_threaded_blas()
        if single:
            _backward[float](<float*>pq, <float*>pk, <float*>pv, <float*>po, <float*>pgo,
                             <float*>pl, <float*>pdq, <float*>pdk, <float*>pdv, <float*>pa,
                             pkeep, &g, <float>scale, nt)
        else:
            _backward[double](<double*>pq, <double*>pk, <double*>pv, <double*>po,
                              <double*>pgo, <double*>pl, <double*>pdq, <double*>pdk,
                              <double*>pdv, <double*>pa, pkeep, &g, scale, nt)
        _restore_threads(before, omp_before)


KERNELS = {"scaled_dot_product_attention": sdpa_forward,
           "scaled_dot_product_attention_backward": sdpa_backward}
