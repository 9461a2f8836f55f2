# cython: boundscheck=False, wraparound=False
"""Fused layer_norm forward over the last dims of a contiguous float tensor: each row read
twice while it is in cache (mean, then variance around it) and written once with the affine
step applied, rows split across the OpenMP team. The decomposition (mean, var, sub, mul,
add: five passes and four temporaries) ran at ~0.1x PyTorch here. Used for inference, per
the contract in nn/_functional/normalization.py.

NOTE [ layer_norm accumulation ]
A row's sums run in LANES independent partial sums (a fixed-width inner loop the compiler
turns into several vector accumulators, so the adds do not wait on one another) over blocks
of BLOCK elements; each block's total is added in double. float32 rows thus sum in float32
within a block, as PyTorch's CPU kernel does, and in double across blocks, so a long row
loses no more than a short one; float64 rows sum in double throughout. The earlier kernel
summed every element in double (half the vector width, a convert per element): at 4096x1024
it was compute-bound inside cache, 0.89x PyTorch.

Training (NOTE [ Fused kernels ] in nn/_functional/normalization.py): the same forward also
writes each row's (mean, rstd); the backward reads them and makes one pass over a row for
its two sums (of g*w and of g*w*(x - mean), summed as above) and one to write grad_x, and
`layer_norm_backward_affine` sums grad_weight and grad_bias over the rows (one private row
of column sums per thread, in double, added in thread order). The decomposition they
replace took ~20 kernels per layer_norm forward and backward.

RMSNorm is the same kernel with the mean taken as 0 (`rms`): one pass for the sum of
squares, one to write; its statistics are (0, rstd), so layer_norm's backward without the
mean's term and `layer_norm_backward_affine` give its gradients. The decomposition (square,
mean, add, rsqrt, two products) took 3x PyTorch's time on 1024x1024 float32.

group_norm uses the same row sums, with a weight and bias per channel (NOTE [ group_norm ])."""
import numpy as np
cimport numpy as cnp

from tensorlib._C.tensor_impl cimport TensorImpl, host_array
from tensorlib_cpu import fastreduce, streaming

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #if defined(__SSE__)
    #include <xmmintrin.h>
    #endif
    #define LN_LANES 32
    #define LN_BLOCK 1024
    /* NOTE [ layer_norm streaming stores ]: an output past the last-level cache leaves it
       anyway; written with non-temporal stores it is not first read into the caches (one
       memory pass saved of three). Below that a streamed output also misses the cache for
       the next op: slower. The size is set at import from the CPU (streaming.py). Same
       arithmetic, same results. */
    static double ln_stream_bytes = 8.0 * 1024 * 1024;
    #if defined(__GNUC__) && defined(__x86_64__)
    /* The float32 AVX-512 loops (row sums, streamed output) are compiled by a function
       attribute and chosen at import from the CPU (ln_detect), whatever the build targets. */
    #include <immintrin.h>
    #define LN_X86 1
    #define LN_AVX512 __attribute__((target("avx512f")))
    #define LN_FENCE() _mm_sfence()
    static int ln_has_avx512 = 0;
    static void ln_detect(void) {
        __builtin_cpu_init();
        ln_has_avx512 = __builtin_cpu_supports("avx512f");
    }
    #else
    #define LN_X86 0
    #define LN_FENCE() ((void)0)
    static int ln_has_avx512 = 0;
    static void ln_detect(void) {}
    #endif
    #define DEFINE_LN_STREAM(NAME, ATTR, T, V, W, SUFFIX, P)                               \\
    /* y[i] for i from y's first vector-aligned address in whole vectors, streamed;        \\
       returns where it stopped (the caller writes the rest) */                            \\
    ATTR static inline Py_ssize_t NAME(const T* x, const T* w, const T* b, T* y,           \\
                                       Py_ssize_t n, T m, T rstd) {                        \\
        Py_ssize_t i = 0;                                                                  \\
        for (; i < n && ((size_t)(y + i) & (sizeof(V) - 1)); i++) {                        \\
            T v = (x[i] - m) * rstd; if (w) v = v * w[i]; if (b) v = v + b[i]; y[i] = v;   \\
        }                                                                                  \\
        const V vm = P##_set1_##SUFFIX(m), vr = P##_set1_##SUFFIX(rstd);                   \\
        for (; i + W <= n; i += W) {                                                       \\
            V v = P##_mul_##SUFFIX(P##_sub_##SUFFIX(P##_loadu_##SUFFIX(x + i), vm), vr);   \\
            if (w) v = P##_mul_##SUFFIX(v, P##_loadu_##SUFFIX(w + i));                     \\
            if (b) v = P##_add_##SUFFIX(v, P##_loadu_##SUFFIX(b + i));                     \\
            P##_stream_##SUFFIX(y + i, v);                                                 \\
        }                                                                                   \\
        return i;                                                                           \\
    }
    #if LN_X86
    DEFINE_LN_STREAM(ln_stream_avx512, LN_AVX512, float, __m512, 16, ps, _mm512)
    #endif
    #if defined(__AVX__)
    DEFINE_LN_STREAM(ln_stream256_float, , float, __m256, 8, ps, _mm256)
    DEFINE_LN_STREAM(ln_stream_double, , double, __m256d, 4, pd, _mm256)
    #else
    #define ln_stream256_float(x, w, b, y, n, m, rstd) ((Py_ssize_t)0)
    #define ln_stream_double(x, w, b, y, n, m, rstd) ((Py_ssize_t)0)
    #endif
    /* float32: whole 64-byte lines per store where the CPU has AVX-512 */
    static inline Py_ssize_t ln_stream_float(const float* x, const float* w, const float* b,
                                             float* y, Py_ssize_t n, float m, float rstd) {
    #if LN_X86
        if (ln_has_avx512) return ln_stream_avx512(x, w, b, y, n, m, rstd);
    #endif
        return ln_stream256_float(x, w, b, y, n, m, rstd);
    }
    /* The next row asked into L2 while this one is summed and written (its reads would
       otherwise start only when the first pass over it does). */
    static inline void ln_prefetch(const void* p, Py_ssize_t bytes) {
    #if defined(__SSE__)
        for (Py_ssize_t k = 0; k < bytes; k += 64) _mm_prefetch((const char*)p + k, _MM_HINT_T1);
    #else
        (void)p; (void)bytes;
    #endif
    }
    /* Rows per piece of the thread team's work: 8 pieces a thread, taken as threads come
       free, so a thread that loses its core to another process (a shared machine) holds
       up one piece instead of its whole static half. Results do not depend on it. */
    static inline Py_ssize_t ln_chunk(Py_ssize_t rows, int nt) {
        Py_ssize_t c = rows / (8 * (Py_ssize_t)(nt > 0 ? nt : 1));
        return c > 0 ? c : 1;
    }
    #define DEFINE_LN_SUM(T)                                                                \\
    /* sum of (x[i] - c)^p over a row, p = 1 or 2: see NOTE [ layer_norm accumulation ] */  \\
    static inline double ln_sum_scalar_##T(const T* x, Py_ssize_t n, T c, int square) {    \\
        double total = 0;                                                                   \\
        for (Py_ssize_t b = 0; b < n; b += LN_BLOCK) {                                      \\
            const Py_ssize_t e = b + LN_BLOCK < n ? b + LN_BLOCK : n;                       \\
            T acc[LN_LANES] = {0}; T s = 0; Py_ssize_t i = b; int l;                        \\
            if (square) {                                                                   \\
                for (; i + LN_LANES <= e; i += LN_LANES)                                    \\
                    for (l = 0; l < LN_LANES; l++) { T d = x[i + l] - c; acc[l] += d * d; } \\
                for (; i < e; i++) { T d = x[i] - c; s += d * d; }                          \\
            } else {                                                                        \\
                for (; i + LN_LANES <= e; i += LN_LANES)                                    \\
                    for (l = 0; l < LN_LANES; l++) acc[l] += x[i + l];                      \\
                for (; i < e; i++) s += x[i];                                               \\
            }                                                                               \\
            for (l = 0; l < LN_LANES; l++) s += acc[l];                                     \\
            total += s;                                                                     \\
        }                                                                                   \\
        return total;                                                                       \\
    }
    #define DEFINE_LAYER_NORM(T)                                                            \\
    /* st (rows, 2), when not NULL, gets each row's (mean, rstd) for the backward; rms:    \\
       RMSNorm, the mean taken as 0 (so st gets (0, rstd)) */                               \\
    static void layer_norm_##T(const T* x, const T* w, const T* b, T* y, T* st,            \\
                               Py_ssize_t rows, Py_ssize_t n, double eps, int nt, int rms) {\\
        const int stream = (double)rows * n * sizeof(T) >= ln_stream_bytes;                  \\
        if (!stream && !rms && ln_pipe_##T(x, w, b, y, st, rows, n, eps, nt)) return;       \\
        const Py_ssize_t chunk = ln_chunk(rows, nt);                                        \\
        _Pragma("omp parallel num_threads(nt) if (rows * n > 32768 && rows > 1)")           \\
        {                                                                                   \\
            Py_ssize_t r;                                                                   \\
            _Pragma("omp for schedule(dynamic, chunk)")                                     \\
            for (r = 0; r < rows; r++) {                                                    \\
                const T* xr = x + r * n; T* yr = y + r * n; Py_ssize_t i, i0 = 0;          \\
                if (stream && r + 1 < rows) ln_prefetch(xr + n, n * sizeof(T));           \\
                const T m = rms ? (T)0 : (T)(ln_sum_##T(xr, n, 0, 0) / n);                  \\
                const T rstd = (T)(1.0 / sqrt(ln_sum_##T(xr, n, m, 1) / n + eps));          \\
                if (st) { st[2 * r] = m; st[2 * r + 1] = rstd; }                            \\
                if (stream) i0 = ln_stream_##T(xr, w, b, yr, n, m, rstd);                   \\
                if (w && b) { _Pragma("omp simd") for (i = i0; i < n; i++) yr[i] = (xr[i] - m) * rstd * w[i] + b[i]; } \\
                else if (w) { _Pragma("omp simd") for (i = i0; i < n; i++) yr[i] = (xr[i] - m) * rstd * w[i]; } \\
                else if (b) { _Pragma("omp simd") for (i = i0; i < n; i++) yr[i] = (xr[i] - m) * rstd + b[i]; } \\
                else { _Pragma("omp simd") for (i = i0; i < n; i++) yr[i] = (xr[i] - m) * rstd; } \\
            }                                                                               \\
            if (stream) LN_FENCE();                                                         \\
        }                                                                                   \\
    }
    #define DEFINE_LAYER_NORM_BACKWARD(T)                                                   \\
    /* a row's sums of g*w and of g*w*(x - m) (w NULL: 1), as ln_sum */                     \\
    static inline void ln_dots_##T(const T* g, const T* w, const T* x, Py_ssize_t n, T m,  \\
                                   double* sum_gw, double* sum_gwx) {                       \\
        double ta = 0, tb = 0;                                                              \\
        for (Py_ssize_t b = 0; b < n; b += LN_BLOCK) {                                      \\
            const Py_ssize_t e = b + LN_BLOCK < n ? b + LN_BLOCK : n;                       \\
            T aa[LN_LANES] = {0}, ab[LN_LANES] = {0}; T sa = 0, sb = 0; Py_ssize_t i = b; int l; \\
            if (w) {                                                                        \\
                for (; i + LN_LANES <= e; i += LN_LANES)                                    \\
                    for (l = 0; l < LN_LANES; l++) {                                        \\
                        T gw = g[i + l] * w[i + l]; aa[l] += gw; ab[l] += gw * (x[i + l] - m); } \\
                for (; i < e; i++) { T gw = g[i] * w[i]; sa += gw; sb += gw * (x[i] - m); } \\
            } else {                                                                        \\
                for (; i + LN_LANES <= e; i += LN_LANES)                                    \\
                    for (l = 0; l < LN_LANES; l++) {                                        \\
                        aa[l] += g[i + l]; ab[l] += g[i + l] * (x[i + l] - m); }            \\
                for (; i < e; i++) { sa += g[i]; sb += g[i] * (x[i] - m); }                 \\
            }                                                                               \\
            for (l = 0; l < LN_LANES; l++) { sa += aa[l]; sb += ab[l]; }                    \\
            ta += sa; tb += sb;                                                             \\
        }                                                                                   \\
        *sum_gw = ta; *sum_gwx = tb;                                                        \\
    }                                                                                       \\
    /* gx = rstd * (g*w - mean(g*w) - xhat * mean(g*w * xhat)) per row */                   \\
    static void layer_norm_bwd_##T(const T* g, const T* x, const T* w, const T* st, T* gx, \\
                                   Py_ssize_t rows, Py_ssize_t n, int nt, int rms) {        \\
        const Py_ssize_t chunk = ln_chunk(rows, nt);                                        \\
        _Pragma("omp parallel for schedule(dynamic, chunk) num_threads(nt) if (rows * n > 32768 && rows > 1)") \\
        for (Py_ssize_t r = 0; r < rows; r++) {                                             \\
            const T* gr = g + r * n; const T* xr = x + r * n; T* out = gx + r * n;          \\
            const T m = st[2 * r], rstd = st[2 * r + 1]; double sgw, sgwx; Py_ssize_t i;     \\
            ln_dots_##T(gr, w, xr, n, m, &sgw, &sgwx);                                      \\
            const T ma = rms ? (T)0 : (T)(sgw / n), mb = (T)(sgwx * rstd / n);             \\
            if (w) { _Pragma("omp simd") for (i = 0; i < n; i++)                            \\
                out[i] = rstd * (gr[i] * w[i] - ma - (xr[i] - m) * rstd * mb); }             \\
            else { _Pragma("omp simd") for (i = 0; i < n; i++)                              \\
                out[i] = rstd * (gr[i] - ma - (xr[i] - m) * rstd * mb); }                    \\
        }                                                                                   \\
    }                                                                                       \\
    /* gw[j] = sum_r g[r, j] * xhat[r, j], gb[j] = sum_r g[r, j] (either may be NULL) */    \\
    static int layer_norm_affine_##T(const T* g, const T* x, const T* st, T* gw, T* gb,    \\
                                     Py_ssize_t rows, Py_ssize_t n, int nt) {               \\
        if (rows * n <= 32768 || rows < 2) nt = 1;                                          \\
        double* part = (double*)calloc((size_t)nt * 2 * n, sizeof(double));                 \\
        if (!part) return 0;                                                                \\
        _Pragma("omp parallel num_threads(nt)")                                             \\
        {                                                                                   \\
            const int t = omp_get_thread_num(), k = omp_get_num_threads();                  \\
            double* pw = part + (size_t)t * 2 * n; double* pb = pw + n;                     \\
            const Py_ssize_t lo = rows * t / k, hi = rows * (t + 1) / k;                    \\
            for (Py_ssize_t r = lo; r < hi; r++) {                                          \\
                const T* gr = g + r * n; const T* xr = x + r * n;                           \\
                const T m = st[2 * r], rstd = st[2 * r + 1]; Py_ssize_t j;                  \\
                if (gw) { _Pragma("omp simd") for (j = 0; j < n; j++)                       \\
                    pw[j] += (double)(gr[j] * ((xr[j] - m) * rstd)); }                      \\
                if (gb) { _Pragma("omp simd") for (j = 0; j < n; j++) pb[j] += (double)gr[j]; } \\
            }                                                                               \\
        }                                                                                   \\
        for (Py_ssize_t j = 0; j < n; j++) {                                                \\
            double sw = 0, sb = 0;                                                          \\
            for (int t = 0; t < nt; t++) { sw += part[(size_t)t * 2 * n + j];               \\
                                           sb += part[(size_t)t * 2 * n + n + j]; }         \\
            if (gw) gw[j] = (T)sw;                                                          \\
            if (gb) gb[j] = (T)sb;                                                          \\
        }                                                                                   \\
        free(part);                                                                         \\
        return 1;                                                                           \\
    }
    #include <omp.h>
    #include <stdlib.h>
    #if LN_X86
    #include "vector_sum.h"
    /* float32 rows with AVX-512: 64 partial sums (four 16-lane accumulators: the adds of
       one block overlap four deep instead of waiting on each other) per block, added as a
       tree (tl_sum_avx512 for the plain sums); the rest as in NOTE [ layer_norm
       accumulation ]. */
    LN_AVX512 static inline __mmask16 ln_lanes(Py_ssize_t left) {
        return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
    }
    LN_AVX512 static double ln_sum_avx512(const float* x, Py_ssize_t n, float c, int square) {
        double total = 0;
        const __m512 vc = _mm512_set1_ps(c);
        for (Py_ssize_t b = 0; b < n; b += LN_BLOCK) {
            const Py_ssize_t e = b + LN_BLOCK < n ? b + LN_BLOCK : n;
            if (!square) {
                total += tl_sum_avx512(x + b, e - b);
                continue;
            }
            __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            Py_ssize_t i = b;
            for (; i + 64 <= e; i += 64) {
                __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(x + i), vc);
                __m512 d1 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vc);
                __m512 d2 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 32), vc);
                __m512 d3 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 48), vc);
                a0 = _mm512_add_ps(a0, _mm512_mul_ps(d0, d0));
                a1 = _mm512_add_ps(a1, _mm512_mul_ps(d1, d1));
                a2 = _mm512_add_ps(a2, _mm512_mul_ps(d2, d2));
                a3 = _mm512_add_ps(a3, _mm512_mul_ps(d3, d3));
            }
            for (; i < e; i += 16) {
                __mmask16 m = ln_lanes(e - i);
                __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + i), vc);
                a0 = _mm512_add_ps(a0, _mm512_mul_ps(d, d));
            }
            total += _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1),
                                                        _mm512_add_ps(a2, a3)));
        }
        return total;
    }
    #endif
    DEFINE_LN_SUM(float)
    DEFINE_LN_SUM(double)
    #define ln_sum_double ln_sum_scalar_double
    static inline double ln_sum_float(const float* x, Py_ssize_t n, float c, int square) {
    #if LN_X86
        if (ln_has_avx512) return ln_sum_avx512(x, n, c, square);
    #endif
        return ln_sum_scalar_float(x, n, c, square);
    }
    #if LN_X86
    /* NOTE [ layer_norm pipelined rows ]: float32 rows with AVX-512, outputs not streamed:
       row r is written in the same loop that sums row r + 1 (its mean's pass), so the
       memory system serves a read stream and a write stream at once instead of one after the
       other; 4096x1024 in a C probe 1377 -> 1230 us on one thread, 742 -> 654 on two. The
       sums run block by block exactly as ln_sum_avx512's and every element is computed as
       the loops in layer_norm (no fused multiply-add), so the results are bit for bit the
       same. ln_write_sum_avx512 writes row x to y and returns the sum of next (NULL: 0). */
    LN_AVX512 static double ln_write_sum_avx512(const float* x, const float* w,
                                                const float* b, float* y, Py_ssize_t n,
                                                float m, float rstd, const float* next) {
        double total = 0;
        const __m512 vm = _mm512_set1_ps(m), vr = _mm512_set1_ps(rstd);
        for (Py_ssize_t bl = 0; bl < n; bl += LN_BLOCK) {
            const Py_ssize_t e = bl + LN_BLOCK < n ? bl + LN_BLOCK : n;
            __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            Py_ssize_t i = bl;
            for (; i + 64 <= e; i += 64) {
                for (int k = 0; k < 64; k += 16) {
                    __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i + k), vm), vr);
                    if (w) v = _mm512_mul_ps(v, _mm512_loadu_ps(w + i + k));
                    if (b) v = _mm512_add_ps(v, _mm512_loadu_ps(b + i + k));
                    _mm512_storeu_ps(y + i + k, v);
                }
                if (next) {
                    a0 = _mm512_add_ps(a0, _mm512_loadu_ps(next + i));
                    a1 = _mm512_add_ps(a1, _mm512_loadu_ps(next + i + 16));
                    a2 = _mm512_add_ps(a2, _mm512_loadu_ps(next + i + 32));
                    a3 = _mm512_add_ps(a3, _mm512_loadu_ps(next + i + 48));
                }
            }
            for (; i < e; i += 16) {
                const __mmask16 k = ln_lanes(e - i);
                __m512 v = _mm512_maskz_mul_ps(
                    k, _mm512_maskz_sub_ps(k, _mm512_maskz_loadu_ps(k, x + i), vm), vr);
                if (w) v = _mm512_maskz_mul_ps(k, v, _mm512_maskz_loadu_ps(k, w + i));
                if (b) v = _mm512_maskz_add_ps(k, v, _mm512_maskz_loadu_ps(k, b + i));
                _mm512_mask_storeu_ps(y + i, k, v);
                if (next) a0 = _mm512_add_ps(a0, _mm512_maskz_loadu_ps(k, next + i));
            }
            if (next)
                total += _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1),
                                                            _mm512_add_ps(a2, a3)));
        }
        return total;
    }
    /* layer_norm_float's rows pipelined as the NOTE says: whole chunks of ln_chunk rows per
       task (the same split), the first row of a chunk summed alone. */
    static int ln_pipe_float(const float* x, const float* w, const float* b, float* y,
                             float* st, Py_ssize_t rows, Py_ssize_t n, double eps, int nt) {
        if (!ln_has_avx512) return 0;
        const Py_ssize_t chunk = ln_chunk(rows, nt), chunks = (rows + chunk - 1) / chunk;
        Py_ssize_t c;
        _Pragma("omp parallel for schedule(dynamic) num_threads(nt) if (rows * n > 32768 && rows > 1)")
        for (c = 0; c < chunks; c++) {
            const Py_ssize_t r0 = c * chunk, r1 = r0 + chunk < rows ? r0 + chunk : rows;
            double sum = ln_sum_avx512(x + r0 * n, n, 0, 0);
            for (Py_ssize_t r = r0; r < r1; r++) {
                const float* xr = x + r * n;
                const float m = (float)(sum / n);
                const float rstd = (float)(1.0 / sqrt(ln_sum_avx512(xr, n, m, 1) / n + eps));
                if (st) { st[2 * r] = m; st[2 * r + 1] = rstd; }
                sum = ln_write_sum_avx512(xr, w, b, y + r * n, n, m, rstd,
                                          r + 1 < r1 ? xr + n : NULL);
            }
        }
        return 1;
    }
    #else
    #define ln_pipe_float(x, w, b, y, st, rows, n, eps, nt) 0
    #endif
    #define ln_pipe_double(x, w, b, y, st, rows, n, eps, nt) 0
    DEFINE_LAYER_NORM(float)
    DEFINE_LAYER_NORM(double)
    DEFINE_LAYER_NORM_BACKWARD(float)
    DEFINE_LAYER_NORM_BACKWARD(double)
    /* NOTE [ group_norm ]: an (N, C, *) input is N * G rows (n, g) of cg = C / G channels of
       hw elements each, normalized as layer_norm's rows (same sums), then each channel's
       weight and bias applied: y = (x - m) * (rstd * w[c]) + b[c]. The backward sums, per
       (n, c), g and g * (x - m) (ln_dots over the channel's hw elements); per row these give
       layer_norm's two sums of the weighted gradient and so its grad_x formula, and summed
       over n they give grad_weight (times rstd) and grad_bias, in double, in n order. */
    #define DEFINE_GROUP_NORM(T)                                                            \\
    static void group_norm_##T(const T* x, const T* w, const T* b, T* y, T* st,            \\
                               Py_ssize_t rows, Py_ssize_t groups, Py_ssize_t cg,          \\
                               Py_ssize_t hw, double eps, int nt) {                         \\
        const Py_ssize_t n = cg * hw, chunk = ln_chunk(rows, nt);                           \\
        _Pragma("omp parallel for schedule(dynamic, chunk) num_threads(nt) if (rows * n > 32768 && rows > 1)") \\
        for (Py_ssize_t r = 0; r < rows; r++) {                                             \\
            const T* xr = x + r * n; T* yr = y + r * n;                                     \\
            const T m = (T)(ln_sum_##T(xr, n, 0, 0) / n);                                   \\
            const T rstd = (T)(1.0 / sqrt(ln_sum_##T(xr, n, m, 1) / n + eps));              \\
            const Py_ssize_t c0 = r % groups * cg;                                          \\
            if (st) { st[2 * r] = m; st[2 * r + 1] = rstd; }                                \\
            for (Py_ssize_t c = 0; c < cg; c++) {                                           \\
                const T a = w ? rstd * w[c0 + c] : rstd, s = b ? b[c0 + c] : (T)0;          \\
                const T* xc = xr + c * hw; T* yc = yr + c * hw; Py_ssize_t i;               \\
                _Pragma("omp simd")                                                         \\
                for (i = 0; i < hw; i++) yc[i] = (xc[i] - m) * a + s;                       \\
            }                                                                               \\
        }                                                                                   \\
    }                                                                                       \\
    /* gx (NULL: not wanted), and per (n, c) sums of g (db) and of g * (x - m) (ds); g_one: \\
       g is one value for every element (the gradient of a sum, not expanded in memory) */  \\
    static void group_norm_bwd_##T(const T* g, const T* x, const T* w, const T* st, T* gx, \\
                                   double* ds, double* db, Py_ssize_t rows,                 \\
                                   Py_ssize_t groups, Py_ssize_t cg, Py_ssize_t hw, int nt, \\
                                   int g_one) {                                             \\
        const Py_ssize_t n = cg * hw, chunk = ln_chunk(rows, nt);                           \\
        _Pragma("omp parallel for schedule(dynamic, chunk) num_threads(nt) if (rows * n > 32768 && rows > 1)") \\
        for (Py_ssize_t r = 0; r < rows; r++) {                                             \\
            const T* gr = g_one ? g : g + r * n; const T* xr = x + r * n;                   \\
            const T m = st[2 * r], rstd = st[2 * r + 1];                                    \\
            const Py_ssize_t c0 = r % groups * cg; double sgw = 0, sgwx = 0; Py_ssize_t c;   \\
            for (c = 0; c < cg; c++) {                                                      \\
                double sg, sgx; const double wc = w ? (double)w[c0 + c] : 1.0;              \\
                if (g_one) {                                                                \\
                    sg = (double)g[0] * hw;                                                 \\
                    sgx = (double)g[0] * (ln_sum_##T(xr + c * hw, hw, 0, 0) - (double)m * hw); \\
                } else {                                                                    \\
                    ln_dots_##T(gr + c * hw, NULL, xr + c * hw, hw, m, &sg, &sgx);          \\
                }                                                                           \\
                db[r * cg + c] = sg; ds[r * cg + c] = sgx;                                  \\
                sgw += sg * wc; sgwx += sgx * wc;                                           \\
            }                                                                               \\
            if (!gx) continue;                                                              \\
            const T ma = (T)(sgw / n), mb = (T)(sgwx * rstd / n);                           \\
            for (c = 0; c < cg; c++) {                                                      \\
                const T wc = w ? w[c0 + c] : (T)1;                                          \\
                const T* gc = gr + c * hw; const T* xc = xr + c * hw; const T g0 = g[0];    \\
                T* out = gx + r * n + c * hw; Py_ssize_t i;                                 \\
                if (g_one) { _Pragma("omp simd") for (i = 0; i < hw; i++)                   \\
                    out[i] = rstd * (g0 * wc - ma - (xc[i] - m) * rstd * mb); }             \\
                else { _Pragma("omp simd") for (i = 0; i < hw; i++)                         \\
                    out[i] = rstd * (gc[i] * wc - ma - (xc[i] - m) * rstd * mb); }          \\
            }                                                                               \\
        }                                                                                   \\
    }                                                                                       \\
    /* gw[c] = sum_n ds[n, c] * rstd[n, c / cg], gb[c] = sum_n db[n, c] (either NULL) */    \\
    static void group_norm_affine_##T(const double* ds, const double* db, const T* st,     \\
                                      T* gw, T* gb, Py_ssize_t batch, Py_ssize_t channels,  \\
                                      Py_ssize_t cg) {                                      \\
        const Py_ssize_t groups = channels / cg;                                            \\
        for (Py_ssize_t c = 0; c < channels; c++) {                                         \\
            double sw = 0, sb = 0;                                                          \\
            for (Py_ssize_t k = 0; k < batch; k++) {                                        \\
                sw += ds[k * channels + c] * (double)st[2 * (k * groups + c / cg) + 1];     \\
                sb += db[k * channels + c];                                                 \\
            }                                                                               \\
            if (gw) gw[c] = (T)sw;                                                          \\
            if (gb) gb[c] = (T)sb;                                                          \\
        }                                                                                   \\
    }
    DEFINE_GROUP_NORM(float)
    DEFINE_GROUP_NORM(double)
    """
    void ln_detect()
    double ln_stream_bytes
    int ln_has_avx512
    void layer_norm_float(const float* x, const float* w, const float* b, float* y,
                          float* st, Py_ssize_t rows, Py_ssize_t n, double eps, int nt,
                          int rms) nogil
    void layer_norm_double(const double* x, const double* w, const double* b, double* y,
                           double* st, Py_ssize_t rows, Py_ssize_t n, double eps, int nt,
                           int rms) nogil
    void layer_norm_bwd_float(const float* g, const float* x, const float* w,
                              const float* st, float* gx, Py_ssize_t rows, Py_ssize_t n,
                              int nt, int rms) nogil
    void layer_norm_bwd_double(const double* g, const double* x, const double* w,
                               const double* st, double* gx, Py_ssize_t rows, Py_ssize_t n,
                               int nt, int rms) nogil
    int layer_norm_affine_float(const float* g, const float* x, const float* st, float* gw,
                                float* gb, Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    int layer_norm_affine_double(const double* g, const double* x, const double* st,
                                 double* gw, double* gb, Py_ssize_t rows, Py_ssize_t n,
                                 int nt) nogil
    void group_norm_float(const float* x, const float* w, const float* b, float* y,
                          float* st, Py_ssize_t rows, Py_ssize_t groups, Py_ssize_t cg,
                          Py_ssize_t hw, double eps, int nt) nogil
    void group_norm_double(const double* x, const double* w, const double* b, double* y,
                           double* st, Py_ssize_t rows, Py_ssize_t groups, Py_ssize_t cg,
                           Py_ssize_t hw, double eps, int nt) nogil
    void group_norm_bwd_float(const float* g, const float* x, const float* w,
                              const float* st, float* gx, double* ds, double* db,
                              Py_ssize_t rows, Py_ssize_t groups, Py_ssize_t cg,
                              Py_ssize_t hw, int nt, int g_one) nogil
    void group_norm_bwd_double(const double* g, const double* x, const double* w,
                               const double* st, double* gx, double* ds, double* db,
                               Py_ssize_t rows, Py_ssize_t groups, Py_ssize_t cg,
                               Py_ssize_t hw, int nt, int g_one) nogil
    void group_norm_affine_float(const double* ds, const double* db, const float* st,
                                 float* gw, float* gb, Py_ssize_t batch, Py_ssize_t channels,
                                 Py_ssize_t cg) nogil
    void group_norm_affine_double(const double* ds, const double* db, const double* st,
                                  double* gw, double* gb, Py_ssize_t batch,
                                  Py_ssize_t channels, Py_ssize_t cg) nogil


ln_detect()
# Whether float32 rows are summed and streamed with AVX-512 on this CPU (chosen at import).
AVX512 = bool(ln_has_avx512)


def stream_min_bytes(value=None):
    """The output size from which the forward writes with streaming stores (NOTE [ layer_norm
    streaming stores ]); with a value, sets it. Returns the size before the call."""
    global ln_stream_bytes
    before = ln_stream_bytes
    if value is not None:
        ln_stream_bytes = value
    return before


stream_min_bytes(streaming.LAYER_NORM_STREAM_MIN_BYTES)

cdef bint _dense(cnp.ndarray a, object dtype):
    return a.dtype == dtype and a.flags.c_contiguous


cdef Py_ssize_t _row_length(cnp.ndarray a, int normalized_ndim):
    cdef Py_ssize_t n = 1
    for s in (<object>a).shape[a.ndim - normalized_ndim:]:
        n *= s
    return n


cdef object _compute_dtype(object dt):
    """The dtype the C loops run in: float32/float64 as they are, 16-bit floats in float32."""
    return np.dtype(np.float64) if dt.type is np.float64 else np.dtype(np.float32)


cdef cnp.ndarray _as_dense(a, object dtype):
    return None if a is None else np.ascontiguousarray(a, dtype=dtype)


cdef inline void* _data(cnp.ndarray a):
    return NULL if a is None else cnp.PyArray_DATA(a)


cdef void _forward(cnp.ndarray xv, cnp.ndarray wv, cnp.ndarray bv, cnp.ndarray ov,
                   cnp.ndarray sv, Py_ssize_t rows, Py_ssize_t n, double eps, int rms):
    """The C forward over dense arrays of one compute dtype; sv None: no statistics."""
    cdef int nt = fastreduce.threads_now()
    cdef void* xp = _data(xv)
    cdef void* wp = _data(wv)
    cdef void* bp = _data(bv)
    cdef void* op_ = _data(ov)
    cdef void* sp = _data(sv)
    if xv.dtype.type is np.float32:
        with nogil:
            layer_norm_float(<float*>xp, <float*>wp, <float*>bp, <float*>op_, <float*>sp,
                             rows, n, eps, nt, rms)
    else:
        with nogil:
            layer_norm_double(<double*>xp, <double*>wp, <double*>bp, <double*>op_,
                              <double*>sp, rows, n, eps, nt, rms)


cdef tuple _forward_buffers(cnp.ndarray xv, cnp.ndarray ov, cnp.ndarray sv, weight, bias,
                            Py_ssize_t rows):
    """(compute dtype, x, weight, bias, out, stats) as dense arrays in the compute dtype: the
    operands themselves where they already are, else copies (out and stats: scratch that
    `_write_back` casts into them)."""
    acc = _compute_dtype(xv.dtype)
    xd = _as_dense(xv, acc)
    wd = _as_dense(host_array(weight) if weight is not None else None, acc)
    bd = _as_dense(host_array(bias) if bias is not None else None, acc)
    od = ov if _dense(ov, acc) else np.empty((<object>xv).shape, acc)
    sd = None
    if sv is not None:
        sd = sv if _dense(sv, acc) else np.empty((rows, 2), acc)
    return acc, xd, wd, bd, od, sd


cdef int _write_back(cnp.ndarray ov, cnp.ndarray od, cnp.ndarray sv,
                     cnp.ndarray sd) except -1:
    """The scratch results of `_forward_buffers` cast into out and stats."""
    if od is not ov:
        ov[...] = od
    if sd is not None and sd is not sv:
        sv[...] = sd
    return 0


cdef void _normalize(TensorImpl out, TensorImpl stats, TensorImpl x, weight, bias,
                     int normalized_ndim, double eps, int rms):
    """Dense float32/float64 operands run in place; others through dense copies in the
    compute dtype (16-bit floats in float32), the result then cast into `out`."""
    cdef cnp.ndarray xv = host_array(x), ov = host_array(out)
    cdef cnp.ndarray sv = host_array(stats) if stats is not None else None
    cdef Py_ssize_t n = _row_length(xv, normalized_ndim)
    cdef Py_ssize_t rows = xv.size // n if n else 0
    if rows == 0 or n == 0:
        return
    acc, xd, wd, bd, od, sd = _forward_buffers(xv, ov, sv, weight, bias, rows)
    _forward(xd, wd, bd, od, sd, rows, n, eps, rms)
    _write_back(ov, od, sv, sd)


def layer_norm(TensorImpl out, TensorImpl x, weight, bias, int normalized_ndim, double eps):
    """The `layer_norm` kernel (inference)."""
    _normalize(out, None, x, weight, bias, normalized_ndim, eps, 0)


def layer_norm_train(TensorImpl out, TensorImpl stats, TensorImpl x, weight, bias,
                     int normalized_ndim, double eps):
    """The `layer_norm_train` kernel: `layer_norm`, and each row's (mean, rstd) in stats."""
    _normalize(out, stats, x, weight, bias, normalized_ndim, eps, 0)


def rms_norm(TensorImpl out, TensorImpl x, weight, int normalized_ndim, double eps):
    """The `rms_norm` kernel (inference): layer_norm's with the mean taken as 0."""
    _normalize(out, None, x, weight, None, normalized_ndim, eps, 1)


def rms_norm_train(TensorImpl out, TensorImpl stats, TensorImpl x, weight,
                   int normalized_ndim, double eps):
    """The `rms_norm_train` kernel: `rms_norm`, and each row's (0, rstd) in stats."""
    _normalize(out, stats, x, weight, None, normalized_ndim, eps, 1)


def layer_norm_backward(TensorImpl grad_x, TensorImpl grad_out, TensorImpl x, weight,
                        TensorImpl stats, int normalized_ndim):
    """The `layer_norm_backward` kernel: grad_x from the forward's (mean, rstd) per row."""
    _backward(grad_x, grad_out, x, weight, stats, normalized_ndim, 0)


def rms_norm_backward(TensorImpl grad_x, TensorImpl grad_out, TensorImpl x, weight,
                      TensorImpl stats, int normalized_ndim):
    """The `rms_norm_backward` kernel: grad_x = rstd * (g*w - xhat * mean(g*w * xhat)) per
    row, layer_norm's backward without the mean's term."""
    _backward(grad_x, grad_out, x, weight, stats, normalized_ndim, 1)


cdef void _backward(TensorImpl grad_x, TensorImpl grad_out, TensorImpl x, weight,
                    TensorImpl stats, int normalized_ndim, int rms):
    cdef cnp.ndarray xv = host_array(x), gxv = host_array(grad_x)
    cdef Py_ssize_t n = _row_length(xv, normalized_ndim)
    cdef Py_ssize_t rows = xv.size // n if n else 0
    cdef int nt = fastreduce.threads_now()
    if rows == 0 or n == 0:
        return
    acc = _compute_dtype(xv.dtype)
    cdef cnp.ndarray xd = _as_dense(xv, acc), gd = _as_dense(host_array(grad_out), acc)
    cdef cnp.ndarray wd = _as_dense(host_array(weight) if weight is not None else None, acc)
    cdef cnp.ndarray sd = _as_dense(host_array(stats), acc)
    cdef cnp.ndarray od = gxv if _dense(gxv, acc) else np.empty((<object>xv).shape, acc)
    cdef void* xp = _data(xd)
    cdef void* gp = _data(gd)
    cdef void* wp = _data(wd)
    cdef void* sp = _data(sd)
    cdef void* op_ = _data(od)
    if acc.type is np.float32:
        with nogil:
            layer_norm_bwd_float(<float*>gp, <float*>xp, <float*>wp, <float*>sp, <float*>op_,
                                 rows, n, nt, rms)
    else:
        with nogil:
            layer_norm_bwd_double(<double*>gp, <double*>xp, <double*>wp, <double*>sp,
                                  <double*>op_, rows, n, nt, rms)
    if od is not gxv:
        gxv[...] = od


def layer_norm_backward_affine(grad_weight, grad_bias, TensorImpl grad_out, TensorImpl x,
                               TensorImpl stats, int normalized_ndim):
    """The `layer_norm_backward_affine` kernel: grad_weight = sum over rows of grad_out *
    xhat and grad_bias = sum of grad_out (either output may be None)."""
    cdef cnp.ndarray xv = host_array(x)
    cdef Py_ssize_t n = _row_length(xv, normalized_ndim)
    cdef Py_ssize_t rows = xv.size // n if n else 0
    cdef int nt = fastreduce.threads_now(), ok
    acc = _compute_dtype(xv.dtype)
    cdef cnp.ndarray gwv = host_array(grad_weight) if grad_weight is not None else None
    cdef cnp.ndarray gbv = host_array(grad_bias) if grad_bias is not None else None
    cdef cnp.ndarray gwd = None
    cdef cnp.ndarray gbd = None
    if gwv is not None:
        gwd = gwv if _dense(gwv, acc) else np.empty(n, acc)
    if gbv is not None:
        gbd = gbv if _dense(gbv, acc) else np.empty(n, acc)
    if rows == 0 or n == 0:
        for a in (gwv, gbv):
            if a is not None:
                a[...] = 0
        return
    cdef cnp.ndarray xd = _as_dense(xv, acc), gd = _as_dense(host_array(grad_out), acc)
    cdef cnp.ndarray sd = _as_dense(host_array(stats), acc)
    cdef void* xp = _data(xd)
    cdef void* gp = _data(gd)
    cdef void* sp = _data(sd)
    cdef void* wp = _data(gwd)
    cdef void* bp = _data(gbd)
    if acc.type is np.float32:
        with nogil:
            ok = layer_norm_affine_float(<float*>gp, <float*>xp, <float*>sp, <float*>wp,
                                         <float*>bp, rows, n, nt)
    else:
        with nogil:
            ok = layer_norm_affine_double(<double*>gp, <double*>xp, <double*>sp, <double*>wp,
                                          <double*>bp, rows, n, nt)
    if not ok:
        raise MemoryError(f"layer_norm_backward_affine: {nt} x {2 * n} partial sums")
    if gwd is not None and gwd is not gwv:
        gwv[...] = gwd.reshape((<object>gwv).shape)
    if gbd is not None and gbd is not gbv:
        gbv[...] = gbd.reshape((<object>gbv).shape)


cdef tuple _group_layout(cnp.ndarray x, Py_ssize_t groups):
    """(batch, channels, channels per group, elements per channel) of an (N, C, *) array."""
    cdef Py_ssize_t hw = 1
    for s in (<object>x).shape[2:]:
        hw *= s
    return x.shape[0], x.shape[1], x.shape[1] // groups, hw


def group_norm(TensorImpl out, stats, TensorImpl x, weight, bias, Py_ssize_t num_groups,
               double eps):
    """The `group_norm` kernel (NOTE [ group_norm ]): out, and each (n, g) row's (mean,
    rstd) in stats (None: not wanted); 16-bit floats through float32 copies."""
    cdef cnp.ndarray xv = host_array(x), ov = host_array(out)
    cdef cnp.ndarray sv = host_array(stats) if stats is not None else None
    cdef Py_ssize_t batch, channels, cg, hw
    batch, channels, cg, hw = _group_layout(xv, num_groups)
    cdef Py_ssize_t rows = batch * num_groups
    if xv.size == 0:
        return
    cdef cnp.ndarray xd, wd, bd, od, sd
    acc, xd, wd, bd, od, sd = _forward_buffers(xv, ov, sv, weight, bias, rows)
    cdef int nt = fastreduce.threads_now()
    cdef void* xp = _data(xd)
    cdef void* wp = _data(wd)
    cdef void* bp = _data(bd)
    cdef void* op_ = _data(od)
    cdef void* sp = _data(sd)
    if acc.type is np.float32:
        with nogil:
            group_norm_float(<float*>xp, <float*>wp, <float*>bp, <float*>op_, <float*>sp,
                             rows, num_groups, cg, hw, eps, nt)
    else:
        with nogil:
            group_norm_double(<double*>xp, <double*>wp, <double*>bp, <double*>op_,
                              <double*>sp, rows, num_groups, cg, hw, eps, nt)
    _write_back(ov, od, sv, sd)


def group_norm_backward(grad_x, grad_weight, grad_bias, TensorImpl grad_out, TensorImpl x,
                        weight, TensorImpl stats, Py_ssize_t num_groups):
    """The `group_norm_backward` kernel: grad_x, grad_weight and grad_bias (the unwanted ones
    None) from the forward's (mean, rstd) per (n, g) row."""
    cdef cnp.ndarray xv = host_array(x)
    cdef Py_ssize_t batch, channels, cg, hw
    batch, channels, cg, hw = _group_layout(xv, num_groups)
    cdef Py_ssize_t rows = batch * num_groups
    acc = _compute_dtype(xv.dtype)
    outs = [host_array(t) if t is not None else None for t in (grad_x, grad_weight, grad_bias)]
    if xv.size == 0:                       # no statistics to read: zero sums
        for a in outs[1:]:
            if a is not None:
                a[...] = 0
        return
    dense = [None if a is None else a if _dense(a, acc) else np.empty((<object>a).shape, acc)
             for a in outs]
    cdef cnp.ndarray gxd = dense[0], gwd = dense[1], gbd = dense[2]
    gv = host_array(grad_out)
    cdef bint g_one = not any((<object>gv).strides)          # one value broadcast everywhere
    cdef cnp.ndarray xd = _as_dense(xv, acc)
    cdef cnp.ndarray gd = _as_dense(gv.reshape(-1)[:1] if g_one else gv, acc)
    cdef cnp.ndarray wd = _as_dense(host_array(weight) if weight is not None else None, acc)
    cdef cnp.ndarray sd = _as_dense(host_array(stats), acc)
    cdef cnp.ndarray ds = np.empty(batch * channels), db = np.empty(batch * channels)
    cdef int nt = fastreduce.threads_now()
    cdef void* gp = _data(gd)
    cdef void* xp = _data(xd)
    cdef void* wp = _data(wd)
    cdef void* sp = _data(sd)
    cdef void* gxp = _data(gxd)
    cdef void* gwp = _data(gwd)
    cdef void* gbp = _data(gbd)
    cdef double* dsp = <double*>cnp.PyArray_DATA(ds)
    cdef double* dbp = <double*>cnp.PyArray_DATA(db)
    if acc.type is np.float32:
        with nogil:
            group_norm_bwd_float(<float*>gp, <float*>xp, <float*>wp, <float*>sp,
                                 <float*>gxp, dsp, dbp, rows, num_groups, cg, hw, nt, g_one)
            group_norm_affine_float(dsp, dbp, <float*>sp, <float*>gwp, <float*>gbp, batch,
                                    channels, cg)
    else:
        with nogil:
            group_norm_bwd_double(<double*>gp, <double*>xp, <double*>wp, <double*>sp,
                                  <double*>gxp, dsp, dbp, rows, num_groups, cg, hw, nt,
                                  g_one)
            group_norm_affine_double(dsp, dbp, <double*>sp, <double*>gwp, <double*>gbp,
                                     batch, channels, cg)
    for a, d in zip(outs, dense):
        if a is not None and d is not a:
            a[...] = d


KERNELS = {"group_norm": group_norm, "group_norm_backward": group_norm_backward,
           "layer_norm": layer_norm, "layer_norm_train": layer_norm_train,
           "layer_norm_backward": layer_norm_backward, "rms_norm": rms_norm,
           "rms_norm_train": rms_norm_train, "rms_norm_backward": rms_norm_backward,
           "layer_norm_backward_affine": layer_norm_backward_affine}
