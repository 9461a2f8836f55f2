# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Multithreaded sum / prod / amax / amin reductions for float32 and float64 arrays.

numpy's reductions run on one core with one accumulator chain; these kernels split the
output (and, when there are few outputs, the reduced range) across OpenMP threads and
use many independent accumulators so gcc vectorises the inner loops.

How a call is planned: size-1 dims are dropped, stride-0 reduced dims are folded into a
multiplier (sum: x*n, prod: x**n, amax/amin: ignored), the remaining dims are sorted by
|x stride| (outermost first) and adjacent compatible dims are merged.  Then

* case A, the innermost dim is reduced: each output reduces strided "runs" along it
  (rows of a matrix, or the whole array);
* case B, the innermost dim is kept: each task owns a slice of it and streams the
  reduced rows into a small accumulator buffer (column sums), never walking columns.
  Short reduced runs (<= SHORT_RUN, e.g. (N, 2) over dim 1) are moved here too, so
  the work is vectorised across outputs instead of paying per-output overhead.

Every layout (any strides, negative or zero) ends up in one of the two cases.  Hot
functions are also compiled for AVX2 (gcc target_clones) since the build has no -march.
NaN is tested on the bit patterns because -ffast-math lets gcc fold x != x away.
"""
import os

import numpy as np

cimport numpy as cnp
from libc.stdint cimport int64_t, uint8_t
from tensorlib._C.dtypes cimport BOOL, FLOAT32, FLOAT64, INT64
from tensorlib._C.tensor_impl cimport TensorImpl, is_contiguous
from cython.parallel cimport prange
from libc.stdlib cimport free, malloc
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

cnp.import_array()

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #include <stdlib.h>

    /* In a portable build (TENSORLIB_PORTABLE=1: no -march=native, so no AVX2), build an
       AVX2 copy of the hot task functions next to the baseline (SSE2) one and pick at load
       time. A native build already targets the machine's best. */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(FR_NO_CLONES) && !defined(__AVX2__)
    #define FR_CLONE __attribute__((target_clones("avx2", "default")))
    #else
    #define FR_CLONE
    #endif

    #define FR_MAXD 64
    #define FR_SEQ 16        /* case B: sums of at most FR_SEQ rows add them in order */
    #define FR_BLK 1024      /* a run is summed in blocks of FR_BLK: float lanes, then double */
    #define FR_CW 4096       /* case B: widest inner slice a task owns (whole rows stream best) */

    typedef struct {
        int op;                              /* 0 sum, 1 prod, 2 amax, 3 amin */
        int caseB;                           /* innermost dim kept (1) or reduced (0) */
        int no, nr;                          /* kept dims and reduced dims, innermost excluded */
        Py_ssize_t oshape[FR_MAXD], oxs[FR_MAXD], oos[FR_MAXD];
        Py_ssize_t rshape[FR_MAXD], rxs[FR_MAXD];
        Py_ssize_t n, xs, os;                /* innermost dim: length, x stride, out stride */
        Py_ssize_t O, nch, P, cw, oc;        /* outer outputs, inner slices (B) and their width,
                                                parts, outputs per task (A) */
        Py_ssize_t K;                        /* number of outputs (partial buffer stride) */
        double mult;                         /* folded stride-0 reduced size */
        int* err;                            /* set by a task whose malloc failed */
    } fr_spec;

    static inline void fr_unravel(const fr_spec* s, Py_ssize_t o, Py_ssize_t* xo, Py_ssize_t* oo) {
        Py_ssize_t a = 0, b = 0;
        for (int d = s->no - 1; d >= 0; d--) {
            Py_ssize_t q = o % s->oshape[d];
            o /= s->oshape[d];
            a += q * s->oxs[d];
            b += q * s->oos[d];
        }
        *xo = a; *oo = b;
    }

    /* Advance the odometer over the reduced dims (innermost fastest). */
    #define FR_STEP(s, idx, roff) \\
        for (int _d = (s)->nr - 1; _d >= 0; _d--) { \\
            (roff) += (s)->rxs[_d]; \\
            if (++(idx)[_d] < (s)->rshape[_d]) break; \\
            (roff) -= (s)->rxs[_d] * (s)->rshape[_d]; (idx)[_d] = 0; }

    /* Loop body over i < w, specialised for unit stride so it vectorises. */
    #define FR_ROWS(w, xs, BODY) \\
        if ((xs) == 1) { for (Py_ssize_t i = 0; i < (w); i++) { const Py_ssize_t ii = i; BODY } } \\
        else { for (Py_ssize_t i = 0; i < (w); i++) { const Py_ssize_t ii = i * (xs); BODY } }

    /* Case B sums: FR_CB rows are added in T (four at a time) into tacc, then tacc into the
       double accumulators: a float-to-double conversion per element of every fourth row cost
       (1024, 256).sum(0) 20.7 us on one thread against PyTorch's 14.1. */
    #define FR_CB 64
    #define FR_FLUSH(w) { for (Py_ssize_t i = 0; i < (w); i++) { dacc[i] += tacc[i]; tacc[i] = 0; } }

    /* max of the |bits| of four rows, for the NaN test */
    #define FR_NB4(IT, MASK) { IT u0 = q0[ii] & MASK, u1 = q1[ii] & MASK, u2 = q2[ii] & MASK, u3 = q3[ii] & MASK; \\
        u0 = u0 > u1 ? u0 : u1; u2 = u2 > u3 ? u2 : u3; u0 = u0 > u2 ? u0 : u2; nb[i] = u0 > nb[i] ? u0 : nb[i]; }

    /* Apply the folded broadcast size: sum*n, prod**n (by squaring: no libm call, which
       -ffast-math would turn into an unlinked libmvec symbol inside vectorised loops). */
    static inline double fr_finish(int op, double v, double mult) {
        if (op == 0) return v * mult;
        if (op == 1) {
            double r = 1.0;
            for (unsigned long long e = (unsigned long long)mult; e; e >>= 1) { if (e & 1) r *= v; v *= v; }
            return r;
        }
        return v;
    }

    /* Contiguous float32 runs on AVX-512 where the CPU has it, else AVX2 (chosen at import:
       fr_detect): the vectorised loop of fr_runsum got 256-bit vectors from gcc's tuning and
       its 32 lanes were added up through memory, a third of the time of a 4096x256 sum(-1)
       (80 us on 2 threads against PyTorch's 52); on an AMD EPYC Zen 3 a 4096x4096 sum(-1)
       ran at 0.8x PyTorch. Four vector accumulators per FR_BLK block (vector_sum.h). */
    #if defined(__GNUC__) && defined(__x86_64__)
    #include <immintrin.h>
    static int fr_has_avx512 = 0, fr_has_avx2 = 0;
    static void fr_detect(void) {
        __builtin_cpu_init();
        fr_has_avx512 = __builtin_cpu_supports("avx512f");
        fr_has_avx2 = __builtin_cpu_supports("avx2");
    }
    #include "vector_sum.h"
    __attribute__((target("avx512f")))
    static double fr_runsum_f32_avx512(const float* x, Py_ssize_t n) {
        double total = 0.0;
        for (Py_ssize_t b = 0; b < n; b += FR_BLK)
            total += tl_sum_avx512(x + b, n - b < FR_BLK ? n - b : FR_BLK);
        return total;
    }
    __attribute__((target("avx2")))
    static double fr_runsum_f32_avx2(const float* x, Py_ssize_t n) {
        double total = 0.0;
        for (Py_ssize_t b = 0; b < n; b += FR_BLK)
            total += tl_sum_avx2(x + b, n - b < FR_BLK ? n - b : FR_BLK);
        return total;
    }
    #define FR_FAST_SUM_f32(x, n, s, out) \\
        ((s) != 1 ? 0 : fr_has_avx512 ? (*(out) = fr_runsum_f32_avx512((x), (n)), 1) \\
         : fr_has_avx2 ? (*(out) = fr_runsum_f32_avx2((x), (n)), 1) : 0)
    #else
    static void fr_detect(void) {}
    #define FR_FAST_SUM_f32(x, n, s, out) 0
    #endif
    #define FR_FAST_SUM_f64(x, n, s, out) 0

    /* T: value type, IT: same-size integer, S: suffix, L: lanes, MASK/INF: |x| bits and
       +inf bits.  NaN is detected as (bits & MASK) > INF on integers because -ffast-math
       lets gcc assume x == x. */
    #define FR_DEFINE(T, IT, S, L, MASK, INF, NANBITS) \\
    static inline T fr_nan_##S(void) { IT u = NANBITS; T f; memcpy(&f, &u, sizeof f); return f; } \\
    static inline double fr_runsum_##S(const T* x, Py_ssize_t n, Py_ssize_t s) { \\
        double total = 0.0; \\
        if (FR_FAST_SUM_##S(x, n, s, &total)) return total; \\
        for (Py_ssize_t b = 0; b < n; b += FR_BLK) { \\
            const Py_ssize_t m = n - b < FR_BLK ? n - b : FR_BLK; \\
            const T* p = x + b * s; \\
            T acc[L] = {0}; Py_ssize_t j = 0; \\
            if (s == 1) { for (; j + L <= m; j += L) for (int k = 0; k < L; k++) acc[k] += p[j + k]; } \\
            else { for (; j + L <= m; j += L) for (int k = 0; k < L; k++) acc[k] += p[(j + k) * s]; } \\
            if (s == 1) for (; j + 8 <= m; j += 8) for (int k = 0; k < 8; k++) acc[k] += p[j + k]; \\
            for (; j < m; j++) acc[0] += p[j * s]; \\
            for (int h = L / 2; h > 0; h /= 2) for (int k = 0; k < h; k++) acc[k] += acc[k + h]; \\
            total += acc[0]; \\
        } \\
        return total; \\
    } \\
    static inline double fr_runprod_##S(const T* x, Py_ssize_t n, Py_ssize_t s) { \\
        double total = 1.0; \\
        for (Py_ssize_t b = 0; b < n; b += FR_BLK) { \\
            const Py_ssize_t m = n - b < FR_BLK ? n - b : FR_BLK; \\
            const T* p = x + b * s; \\
            T acc[L]; for (int k = 0; k < L; k++) acc[k] = 1; Py_ssize_t j = 0; \\
            if (s == 1) { for (; j + L <= m; j += L) for (int k = 0; k < L; k++) acc[k] *= p[j + k]; } \\
            else { for (; j + L <= m; j += L) for (int k = 0; k < L; k++) acc[k] *= p[(j + k) * s]; } \\
            if (s == 1) for (; j + 8 <= m; j += 8) for (int k = 0; k < 8; k++) acc[k] *= p[j + k]; \\
            for (; j < m; j++) acc[0] *= p[j * s]; \\
            double t = 1.0; for (int k = 0; k < L; k++) t *= acc[k]; \\
            total *= t; \\
        } \\
        return total; \\
    } \\
    /* max (sign=1) or min (sign=0) of a run; ORs a NaN flag into *bad. */ \\
    static inline T fr_runext_##S(const T* x, Py_ssize_t n, Py_ssize_t s, int ismax, int* bad) { \\
        const IT* xi = (const IT*)x; \\
        T acc[L]; IT nb[L]; \\
        for (int k = 0; k < L; k++) { acc[k] = x[0]; nb[k] = 0; } \\
        Py_ssize_t j = 0; \\
        if (s == 1 && ismax) { for (; j + L <= n; j += L) for (int k = 0; k < L; k++) { \\
            T v = x[j + k]; acc[k] = v > acc[k] ? v : acc[k]; \\
            IT u = xi[j + k] & MASK; nb[k] = u > nb[k] ? u : nb[k]; } } \\
        else if (s == 1) { for (; j + L <= n; j += L) for (int k = 0; k < L; k++) { \\
            T v = x[j + k]; acc[k] = v < acc[k] ? v : acc[k]; \\
            IT u = xi[j + k] & MASK; nb[k] = u > nb[k] ? u : nb[k]; } } \\
        if (s == 1) for (; j + 8 <= n; j += 8) for (int k = 0; k < 8; k++) { \\
            T v = x[j + k]; acc[k] = ismax ? (v > acc[k] ? v : acc[k]) : (v < acc[k] ? v : acc[k]); \\
            IT u = xi[j + k] & MASK; nb[k] = u > nb[k] ? u : nb[k]; } \\
        for (; j < n; j++) { \\
            T v = x[j * s]; \\
            acc[0] = ismax ? (v > acc[0] ? v : acc[0]) : (v < acc[0] ? v : acc[0]); \\
            IT u = xi[j * s] & MASK; nb[0] = u > nb[0] ? u : nb[0]; } \\
        T r = acc[0]; IT ub = nb[0]; \\
        for (int k = 1; k < L; k++) { \\
            r = ismax ? (acc[k] > r ? acc[k] : r) : (acc[k] < r ? acc[k] : r); \\
            ub = nb[k] > ub ? nb[k] : ub; } \\
        if (ub > INF) *bad = 1; \\
        return r; \\
    } \\
    /* Case A task: outputs [o0, o1) (a block of s->oc), part p of the innermost dim. \\
       The outer odometer is stepped, not unravelled, so short rows stay cheap. */ \\
    static FR_CLONE void fr_taskA_##S(const fr_spec* s, const T* x, T* out, double* pv, char* pn, Py_ssize_t t) { \\
        const Py_ssize_t p = t % s->P, o0 = t / s->P * s->oc; \\
        const Py_ssize_t o1 = o0 + s->oc < s->O ? o0 + s->oc : s->O; \\
        Py_ssize_t oidx[FR_MAXD], xo = 0, oo = 0, q = o0; \\
        for (int d = s->no - 1; d >= 0; d--) { \\
            oidx[d] = q % s->oshape[d]; q /= s->oshape[d]; \\
            xo += oidx[d] * s->oxs[d]; oo += oidx[d] * s->oos[d]; } \\
        const Py_ssize_t j0 = s->n * p / s->P, m = s->n * (p + 1) / s->P - j0; \\
        Py_ssize_t idx[FR_MAXD], cnt = 1; \\
        for (int d = 0; d < s->nr; d++) { idx[d] = 0; cnt *= s->rshape[d]; } \\
        const int op = s->op; \\
        for (Py_ssize_t o = o0; o < o1; o++) { \\
            const T* base = x + xo + j0 * s->xs; \\
            Py_ssize_t roff = 0; \\
            double acc = op == 1 ? 1.0 : 0.0; int bad = 0; \\
            for (Py_ssize_t r = 0; r < cnt; r++) { \\
                const T* px = base + roff; \\
                if (op == 0) acc += fr_runsum_##S(px, m, s->xs); \\
                else if (op == 1) acc *= fr_runprod_##S(px, m, s->xs); \\
                else { double v = fr_runext_##S(px, m, s->xs, op == 2, &bad); \\
                       if (r == 0 || (op == 2 ? v > acc : v < acc)) acc = v; } \\
                FR_STEP(s, idx, roff) \\
            } \\
            if (s->P == 1) out[oo] = bad ? fr_nan_##S() : (T)fr_finish(op, acc, s->mult); \\
            else { pv[p * s->K + o] = acc; pn[p * s->K + o] = (char)bad; } \\
            for (int d = s->no - 1; d >= 0; d--) { \\
                xo += s->oxs[d]; oo += s->oos[d]; \\
                if (++oidx[d] < s->oshape[d]) break; \\
                xo -= s->oxs[d] * s->oshape[d]; oo -= s->oos[d] * s->oshape[d]; oidx[d] = 0; } \\
        } \\
    } \\
    /* Case B task: outer output o, inner slice c, part p of the outermost reduced dim. \\
       Rows are consumed four at a time so the accumulator is loaded/stored once per 4. */ \\
    static FR_CLONE void fr_taskB_##S(const fr_spec* s, const T* x, T* out, double* pv, char* pn, Py_ssize_t t) { \\
        const Py_ssize_t cw = s->cw; \\
        /* odd multiples of 64 B between the buffers avoid 4K-aliasing with x's rows */ \\
        char* mem = (char*)malloc(cw * (sizeof(double) + sizeof(T) + sizeof(IT)) + 512); \\
        if (!mem) { *s->err = 1; return; } \\
        double* dacc = (double*)mem; \\
        T* tacc = (T*)(mem + cw * sizeof(double) + 192); \\
        IT* nb = (IT*)((char*)tacc + cw * sizeof(T) + 320); \\
        const Py_ssize_t p = t % s->P, c = (t / s->P) % s->nch, o = t / s->P / s->nch; \\
        Py_ssize_t xo, oo; fr_unravel(s, o, &xo, &oo); \\
        const Py_ssize_t i0 = c * cw, w = s->n - i0 < cw ? s->n - i0 : cw, xs = s->xs; \\
        const Py_ssize_t lo = s->rshape[0] * p / s->P, hi = s->rshape[0] * (p + 1) / s->P; \\
        Py_ssize_t idx[FR_MAXD], cnt = hi - lo, roff = lo * s->rxs[0], r = 0; \\
        idx[0] = lo; \\
        for (int d = 1; d < s->nr; d++) { idx[d] = 0; cnt *= s->rshape[d]; } \\
        const T* base = x + xo + i0 * xs; \\
        const int op = s->op; \\
        const T *r0, *r1, *r2, *r3; const IT *q0, *q1, *q2, *q3; \\
        if (op == 0 && cnt <= FR_SEQ && s->P == 1 && s->mult == 1.0) { \\
            /* few rows: added in order in T, as a loop `acc = acc + row` does (and numpy's \\
               and PyTorch's outer sums): their results are equal bit for bit. One row per \\
               pass: a statement adding several would be reassociated (-ffast-math) */ \\
            for (Py_ssize_t i = 0; i < w; i++) tacc[i] = 0; \\
            for (; r < cnt; r++) { r0 = base + roff; FR_STEP(s, idx, roff) \\
                FR_ROWS(w, xs, tacc[i] += r0[ii];) } \\
            T* po = out + oo + i0 * s->os; \\
            for (Py_ssize_t i = 0; i < w; i++) po[i * s->os] = tacc[i]; \\
            free(mem); return; \\
        } \\
        if (op <= 1) { for (Py_ssize_t i = 0; i < w; i++) { dacc[i] = op; tacc[i] = 0; } } \\
        else { FR_ROWS(w, xs, tacc[i] = base[roff + ii]; nb[i] = 0;) } \\
        for (; r + 4 <= cnt; r += 4) { \\
            r0 = base + roff; FR_STEP(s, idx, roff) r1 = base + roff; FR_STEP(s, idx, roff) \\
            r2 = base + roff; FR_STEP(s, idx, roff) r3 = base + roff; FR_STEP(s, idx, roff) \\
            q0 = (const IT*)r0; q1 = (const IT*)r1; q2 = (const IT*)r2; q3 = (const IT*)r3; \\
            if (op == 0) { FR_ROWS(w, xs, tacc[i] += (r0[ii] + r1[ii]) + (r2[ii] + r3[ii]);) \\
                           if ((r + 4) % FR_CB == 0) FR_FLUSH(w) } \\
            else if (op == 1) { FR_ROWS(w, xs, dacc[i] *= (double)((r0[ii] * r1[ii]) * (r2[ii] * r3[ii]));) } \\
            else if (op == 2) { FR_ROWS(w, xs, { \\
                T a = r0[ii] > r1[ii] ? r0[ii] : r1[ii]; T b = r2[ii] > r3[ii] ? r2[ii] : r3[ii]; \\
                a = a > b ? a : b; tacc[i] = a > tacc[i] ? a : tacc[i]; FR_NB4(IT, MASK) }) } \\
            else { FR_ROWS(w, xs, { \\
                T a = r0[ii] < r1[ii] ? r0[ii] : r1[ii]; T b = r2[ii] < r3[ii] ? r2[ii] : r3[ii]; \\
                a = a < b ? a : b; tacc[i] = a < tacc[i] ? a : tacc[i]; FR_NB4(IT, MASK) }) } \\
        } \\
        for (; r < cnt; r++) { \\
            r0 = base + roff; q0 = (const IT*)r0; FR_STEP(s, idx, roff) \\
            if (op == 0) { FR_ROWS(w, xs, tacc[i] += r0[ii];) } \\
            else if (op == 1) { FR_ROWS(w, xs, dacc[i] *= r0[ii];) } \\
            else if (op == 2) { FR_ROWS(w, xs, { T a = r0[ii]; tacc[i] = a > tacc[i] ? a : tacc[i]; \\
                IT u = q0[ii] & MASK; nb[i] = u > nb[i] ? u : nb[i]; }) } \\
            else { FR_ROWS(w, xs, { T a = r0[ii]; tacc[i] = a < tacc[i] ? a : tacc[i]; \\
                IT u = q0[ii] & MASK; nb[i] = u > nb[i] ? u : nb[i]; }) } \\
        } \\
        if (op == 0) FR_FLUSH(w) \\
        if (op >= 2) { for (Py_ssize_t i = 0; i < w; i++) dacc[i] = tacc[i]; } \\
        if (s->P == 1) { \\
            T* po = out + oo + i0 * s->os; \\
            if (op >= 2) { for (Py_ssize_t i = 0; i < w; i++) po[i * s->os] = nb[i] > INF ? fr_nan_##S() : (T)dacc[i]; } \\
            else { for (Py_ssize_t i = 0; i < w; i++) po[i * s->os] = (T)fr_finish(op, dacc[i], s->mult); } \\
        } else { \\
            const Py_ssize_t k0 = p * s->K + o * s->n + i0; \\
            for (Py_ssize_t i = 0; i < w; i++) { pv[k0 + i] = dacc[i]; pn[k0 + i] = op >= 2 && nb[i] > INF; } \\
        } \\
        free(mem); \\
    } \\
    /* Fold the P partial results of every output and write them (single thread). */ \\
    static void fr_combine_##S(const fr_spec* s, T* out, const double* pv, const char* pn) { \\
        /* case B: outputs o * n + i, unravelled once per o (a division per output cost \\
           more than the adds) */ \\
        const Py_ssize_t inner = s->caseB ? s->n : 1; \\
        for (Py_ssize_t o = 0; o < s->K / inner; o++) { \\
            Py_ssize_t xo, oo; fr_unravel(s, o, &xo, &oo); \\
            for (Py_ssize_t i = 0; i < inner; i++) { \\
                const Py_ssize_t k = o * inner + i; \\
                double v = pv[k]; int bad = pn[k]; \\
                for (Py_ssize_t p = 1; p < s->P; p++) { \\
                    double u = pv[p * s->K + k]; bad |= pn[p * s->K + k]; \\
                    if (s->op == 0) v += u; else if (s->op == 1) v *= u; \\
                    else if (s->op == 2 ? u > v : u < v) v = u; } \\
                out[oo + i * s->os] = bad ? fr_nan_##S() : (T)fr_finish(s->op, v, s->mult); \\
            } \\
        } \\
    }

    FR_DEFINE(float, int32_t, f32, 32, 0x7fffffff, 0x7f800000, 0x7fc00000)
    FR_DEFINE(double, int64_t, f64, 16, 0x7fffffffffffffffLL, 0x7ff0000000000000LL, 0x7ff8000000000000LL)

    static void fr_task(const fr_spec* s, int f64, void* x, void* out, double* pv, char* pn, Py_ssize_t t) {
        if (f64) { if (s->caseB) fr_taskB_f64(s, (const double*)x, (double*)out, pv, pn, t);
                   else fr_taskA_f64(s, (const double*)x, (double*)out, pv, pn, t); }
        else { if (s->caseB) fr_taskB_f32(s, (const float*)x, (float*)out, pv, pn, t);
               else fr_taskA_f32(s, (const float*)x, (float*)out, pv, pn, t); }
    }
    static void fr_combine(const fr_spec* s, int f64, void* out, const double* pv, const char* pn) {
        if (f64) fr_combine_f64(s, (double*)out, pv, pn); else fr_combine_f32(s, (float*)out, pv, pn);
    }
    """
    enum: FR_MAXD
    enum: FR_CW
    enum: FR_SEQ
    enum: FR_CB
    ctypedef struct fr_spec:
        int op, caseB, no, nr
        Py_ssize_t oshape[FR_MAXD]
        Py_ssize_t oxs[FR_MAXD]
        Py_ssize_t oos[FR_MAXD]
        Py_ssize_t rshape[FR_MAXD]
        Py_ssize_t rxs[FR_MAXD]
        Py_ssize_t n, xs, os, O, nch, P, K, cw, oc
        double mult
        int* err
    void fr_task(const fr_spec* s, int f64, void* x, void* out, double* pv, char* pn, Py_ssize_t t) nogil
    void fr_detect()
    void fr_combine(const fr_spec* s, int f64, void* out, const double* pv, const char* pn) nogil


fr_detect()


def _initial_threads():
    """OMP_NUM_THREADS when it is a positive integer (its first entry, as PyTorch reads it),
    else every logical core: a process told to use one thread does."""
    value = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    return max(1, os.cpu_count() or 1)


cdef int _nthreads = _initial_threads()
# Below this many input elements a single thread wins (OpenMP wake-up costs microseconds).
cdef Py_ssize_t PARALLEL_MIN = 32768
# Reduced runs up to this long are planned as case B (measured crossover ~48-64 floats).
cdef Py_ssize_t SHORT_RUN = 48
cdef Py_ssize_t SPLIT_MIN_WIDTH = 256
_OPS = {"sum": 0, "prod": 1, "amax": 2, "amin": 3}


def set_num_threads(int n):
    """Set the thread count of every OpenMP kernel of the backend (GEMM and elementwise too):
    the most each region uses (see threads_now)."""
    global _nthreads
    if n < 1:
        raise ValueError("number of threads must be >= 1")
    _nthreads = n


def get_num_threads():
    """The configured thread count (set_num_threads; what torch.get_num_threads reports)."""
    return _nthreads


# threads_now(): the configured count, lowered to the cores other processes leave free,
# re-sampled every cpu_load.SAMPLE_SECONDS (NOTE [ oversubscription ] in cpu_load.py)
from tensorlib_cpu.cpu_load import SAMPLE_SECONDS as _SAMPLE, LoadSampler as _LoadSampler
_sampler = _LoadSampler()
cdef int _effective = 1 << 30      # the free cores at the last sample (none taken yet)
cdef double _next_sample = 0.0
cdef bint _pinned = False            # deterministic algorithms: the configured count only


def pin_threads(bint pinned):
    """Keep every region on the configured thread count (use_deterministic_algorithms: a
    GEMM or convolution that oneDNN partitions over more threads may round differently)."""
    global _pinned
    _pinned = pinned


cdef inline double _monotonic() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cpdef int threads_now():
    """The threads a kernel's OpenMP region is to use now: at most the configured count, and
    no more than the cores other processes left free over the last sample."""
    global _effective, _next_sample
    if _pinned:
        return _nthreads
    cdef double now = _monotonic()
    if now >= _next_sample:
        _next_sample = now + _SAMPLE
        _effective = _sampler.free_cores()
    return _nthreads if _effective >= _nthreads else _effective


def use_adaptive_threads(bint enabled):
    """Turn the free-core adjustment on or off in this process (TENSORLIB_ADAPTIVE_THREADS
    sets the start); returns the previous setting."""
    global _next_sample, _effective
    before = _sampler.enabled
    _sampler.enabled = enabled
    _next_sample, _effective = 0.0, 1 << 30
    return before


def start_load_interval():
    """Measure the load on our cores from now on, leaving out the time until now (the
    bench's turns: the other libraries ran while this process waited, and are idle when
    its turn begins); the last estimate stands until the new interval is measured."""
    global _next_sample
    _sampler.start_interval()
    _next_sample = _monotonic() + _SAMPLE


cdef inline Py_ssize_t _cdiv(Py_ssize_t a, Py_ssize_t b) nogil:
    return (a + b - 1) // b


def reduce_into(str op, x, tuple axes, out):
    """Reduce x over axes into out (keepdim shape); False means "not handled, use numpy".

    x: float32/float64 ndarray with any strides; axes: sorted distinct non-negative ints;
    out: writable array of x's dtype, shape of x with 1 at each reduced axis, any strides,
    not overlapping x.  Empty reductions give 0 (sum) / 1 (prod); amax/amin over nothing
    returns False so the caller raises.  amax/amin propagate NaN.
    """
    cdef int opc = _OPS.get(op, -1)
    if opc < 0:
        raise ValueError(f"unknown reduction {op!r}")
    if not isinstance(x, np.ndarray) or not isinstance(out, np.ndarray):
        return False
    cdef cnp.ndarray ax = x, ao = out
    dt = ax.dtype
    if dt.type is not np.float32 and dt.type is not np.float64:
        return False
    if ao.dtype != dt or not dt.isnative or not ao.flags.writeable:
        return False
    if not ax.flags.aligned or not ao.flags.aligned:
        return False
    cdef int nd = ax.ndim, d
    if ao.ndim != nd or nd > FR_MAXD:
        if ao.ndim != nd:
            raise ValueError("out must have x's ndim")
        return False
    cdef char red[FR_MAXD]
    _mark_axes(red, nd, axes)
    cdef Py_ssize_t isz = ax.itemsize
    cdef Py_ssize_t shape[FR_MAXD]
    cdef Py_ssize_t xs[FR_MAXD]
    cdef Py_ssize_t os[FR_MAXD]
    for d in range(nd):
        shape[d] = ax.shape[d]
        if ao.shape[d] != (1 if red[d] else shape[d]):
            raise ValueError(f"out shape {out.shape} does not match x {x.shape} reduced over {axes}")
        xs[d] = ax.strides[d] // isz
        os[d] = ao.strides[d] // isz
    cdef int done = _reduce(opc, nd, shape, xs, os, red, cnp.PyArray_DATA(ax),
                            cnp.PyArray_DATA(ao), dt.type is np.float64)
    if done == _FILL:
        ao[...] = 0 if opc == 0 else 1
    elif done == _COPY:
        mult = 1.0
        for d in range(nd):
            if red[d]:
                mult *= shape[d]
        src = x[tuple([slice(0, 1) if red[d] else slice(None) for d in range(nd)])]
        with np.errstate(all="ignore"):     # like the C path: overflow is silent
            if opc == 0 and mult != 1.0:
                np.multiply(src, mult, out=out)
            elif opc == 1 and mult != 1.0:
                np.power(src, mult, out=out)
            else:
                np.copyto(out, src)
    return done != _UNHANDLED


cdef inline char* _tensor_data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + \
        t._offset * t._dtype.itemsize


def reduce_tensor(str op, TensorImpl out, TensorImpl x, tuple axes):
    """reduce_into on the tensors themselves, without numpy views of them (the per-call cost
    of a small reduction), plus whole-tensor reductions of contiguous bool and int64 tensors
    (any/all, counts); False: not handled here (numpy's ufuncs do the rest)."""
    cdef int opc = _OPS.get(op, -1)
    if opc < 0:
        raise ValueError(f"unknown reduction {op!r}")
    cdef int code = x._dtype.code
    if (out._dtype is not x._dtype or type(x._storage.handle) is not np.ndarray
            or type(out._storage.handle) is not np.ndarray):
        return False
    cdef int nd = len(x._sizes), d
    if len(out._sizes) != nd:
        raise ValueError("out must have x's ndim")
    if code == BOOL or code == INT64:
        return len(axes) == nd and _whole(opc, code, x, out)
    if (code != FLOAT32 and code != FLOAT64) or nd > FR_MAXD:
        return False
    cdef char red[FR_MAXD]
    _mark_axes(red, nd, axes)
    cdef Py_ssize_t shape[FR_MAXD]
    cdef Py_ssize_t xs[FR_MAXD]
    cdef Py_ssize_t os[FR_MAXD]
    for d in range(nd):
        shape[d] = x._sizes[d]
        if <Py_ssize_t>out._sizes[d] != (1 if red[d] else shape[d]):
            raise ValueError(f"out shape {out._sizes} does not match x {x._sizes} reduced "
                             f"over {axes}")
        xs[d] = x._strides[d]
        os[d] = out._strides[d]
    return _reduce(opc, nd, shape, xs, os, red, _tensor_data(x), _tensor_data(out),
                   code == FLOAT64) == _DONE


cdef bint _whole(int opc, int code, TensorImpl x, TensorImpl out):
    """Every element of a contiguous, non-empty bool/int64 tensor reduced to one value; sum
    wraps around on overflow as numpy's and torch's int64 sums do. False: not handled."""
    cdef Py_ssize_t n = 1, i
    for s_ in x._sizes:
        n *= <Py_ssize_t>s_
    if n == 0 or not is_contiguous(x) or opc == 1:
        return False
    cdef const uint8_t* b
    cdef const int64_t* v
    cdef uint8_t bacc
    cdef int64_t acc
    if code == BOOL:
        if opc == 0:
            return False                  # bool sums are int64: the op casts first
        b = <const uint8_t*>_tensor_data(x)
        bacc = b[0] != 0
        with nogil:
            if opc == 2:
                for i in range(n):
                    bacc |= b[i]
            else:
                for i in range(n):
                    bacc &= b[i] != 0
        (<uint8_t*>_tensor_data(out))[0] = bacc != 0
        return True
    v = <const int64_t*>_tensor_data(x)
    acc = 0 if opc == 0 else v[0]
    with nogil:
        if opc == 0:
            for i in range(n):
                acc = <int64_t>(<unsigned long long>acc + <unsigned long long>v[i])
        elif opc == 2:
            for i in range(n):
                acc = v[i] if v[i] > acc else acc
        else:
            for i in range(n):
                acc = v[i] if v[i] < acc else acc
    (<int64_t*>_tensor_data(out))[0] = acc
    return True


cdef void _mark_axes(char* red, int nd, tuple axes) except *:
    cdef int d, prev = -1
    for d in range(nd):
        red[d] = 0
    for a in axes:
        d = a
        if d <= prev or d >= nd:
            raise ValueError(f"axes must be sorted, distinct and in range: {axes}")
        red[d] = 1
        prev = d


cdef enum:
    _UNHANDLED = 0      # amax/amin over nothing: the caller raises
    _DONE = 1
    _FILL = 2           # reduced over nothing: out = 0 (sum) or 1 (prod)
    _COPY = 3           # nothing left to reduce: out = x times the folded size


cdef int _reduce(int opc, int nd, Py_ssize_t* shape, Py_ssize_t* xstr, Py_ssize_t* ostr,
                 char* red, void* xp, void* op_, int f64) except -1:
    """Plan and run a reduction; strides in elements. Returns a code above."""
    cdef int d, e, nred = 0
    cdef Py_ssize_t n
    cdef bint empty_out = False, empty_red = False
    for d in range(nd):
        if shape[d] == 0:
            if red[d]:
                empty_red = True
            else:
                empty_out = True
    if empty_out:
        return _DONE
    if empty_red:
        return _UNHANDLED if opc >= 2 else _FILL

    # Dims that matter: (size, x stride, out stride, reduced), strides in elements.
    cdef Py_ssize_t ds[FR_MAXD]
    cdef Py_ssize_t dxs[FR_MAXD]
    cdef Py_ssize_t dos[FR_MAXD]
    cdef Py_ssize_t key[FR_MAXD]
    cdef char dr[FR_MAXD]
    cdef int m = 0
    cdef double mult = 1.0
    for d in range(nd):
        n = shape[d]
        if n == 1:
            continue
        if red[d] and xstr[d] == 0:
            mult *= n        # every element along it is the same value
            continue
        ds[m] = n
        dxs[m] = xstr[d]
        dos[m] = 0 if red[d] else ostr[d]
        dr[m] = red[d]
        nred += red[d]
        # Outermost first: larger |stride|; broadcast kept dims outermost of all.
        key[m] = (dxs[m] if dxs[m] >= 0 else -dxs[m]) if dxs[m] != 0 else (<Py_ssize_t>1 << 62)
        m += 1
    if nred == 0:
        return _COPY

    # Stable insertion sort by key, descending.
    cdef Py_ssize_t t0, t1, t2, t3
    cdef char tr
    for d in range(1, m):
        e = d
        while e > 0 and key[e - 1] < key[e]:
            t0 = ds[e]; ds[e] = ds[e - 1]; ds[e - 1] = t0
            t1 = dxs[e]; dxs[e] = dxs[e - 1]; dxs[e - 1] = t1
            t2 = dos[e]; dos[e] = dos[e - 1]; dos[e - 1] = t2
            t3 = key[e]; key[e] = key[e - 1]; key[e - 1] = t3
            tr = dr[e]; dr[e] = dr[e - 1]; dr[e - 1] = tr
            e -= 1
    # Merge an inner dim into the outer neighbour when they form one strided run.
    cdef int k = 0
    for d in range(1, m):
        if dr[d] == dr[k] and dxs[k] == dxs[d] * ds[d] and dos[k] == dos[d] * ds[d]:
            ds[k] *= ds[d]
            dxs[k] = dxs[d]
            dos[k] = dos[d]
        else:
            k += 1
            ds[k] = ds[d]; dxs[k] = dxs[d]; dos[k] = dos[d]; dr[k] = dr[d]
    m = k + 1
    # Short reduced runs (e.g. (N, 2) summed over dim 1) pay per-output overhead in case A;
    # moving the innermost kept dim last turns them into case B, vectorised across outputs.
    if dr[m - 1] and ds[m - 1] <= SHORT_RUN:
        d = m - 2
        while d >= 0 and dr[d]:
            d -= 1
        if d >= 0 and ds[d] >= 64:
            t0 = ds[d]; t1 = dxs[d]; t2 = dos[d]
            for e in range(d, m - 1):
                ds[e] = ds[e + 1]; dxs[e] = dxs[e + 1]; dos[e] = dos[e + 1]; dr[e] = dr[e + 1]
            ds[m - 1] = t0; dxs[m - 1] = t1; dos[m - 1] = t2; dr[m - 1] = 0

    cdef fr_spec s
    s.op = opc
    s.mult = mult
    s.caseB = not dr[m - 1]
    s.n = ds[m - 1]; s.xs = dxs[m - 1]; s.os = dos[m - 1]
    s.no = 0; s.nr = 0
    cdef Py_ssize_t O = 1, R = 1
    for d in range(m - 1):
        if dr[d]:
            s.rshape[s.nr] = ds[d]; s.rxs[s.nr] = dxs[d]; s.nr += 1
            R *= ds[d]
        else:
            s.oshape[s.no] = ds[d]; s.oxs[s.no] = dxs[d]; s.oos[s.no] = dos[d]; s.no += 1
            O *= ds[d]
    s.O = O
    cdef Py_ssize_t total = O * R * s.n
    # planned for the configured count, whatever threads_now() runs it on: the partial sums
    # (and so the result's rounding) do not change with the load (cpu_load.py)
    cdef int nt = _nthreads if total >= PARALLEL_MIN else 1
    cdef Py_ssize_t base_tasks, split_max
    s.oc = 1
    if s.caseB:
        s.cw = min(s.n, FR_CW)
        split_max = s.rshape[0]
        if R <= FR_SEQ:
            # few rows are added in order (fr_taskB): the threads split the width instead
            split_max = 1
            if nt > 1 and O * _cdiv(s.n, s.cw) < 4 * nt:
                s.cw = max(64, _cdiv(s.n, _cdiv(4 * nt, O)))
        elif nt > 1 and O * _cdiv(s.n, s.cw) < 4 * nt and R < 4 * nt * FR_CB:
            # parts of fewer than FR_CB rows: the width split first, down to slices of
            # SPLIT_MIN_WIDTH, as each part of the rows costs a buffer of partial sums and a
            # serial pass adding them ((64, 4096).sum(0) on 2 threads: 55 us in 8 parts of
            # 8 rows, 18 on one thread, 15.5 in 8 slices). Longer parts keep whole rows:
            # slices of a long column ran (1024, 1024) at 77 us against 65.
            s.cw = max(min(s.n, SPLIT_MIN_WIDTH), _cdiv(s.n, _cdiv(4 * nt, O)))
        s.nch = _cdiv(s.n, s.cw)
        s.K = O * s.n
        base_tasks = O * s.nch
    else:
        s.nch = 1
        s.K = O
        # Blocks of outputs per task: many small blocks, handed out dynamically, keep the
        # threads balanced even when another process steals one of the cores.
        s.oc = _cdiv(O, 16 * nt) if nt > 1 else O
        base_tasks = _cdiv(O, s.oc)
        split_max = max(1, s.n // 4096)
    # Split the reduction itself only when there are too few outputs to balance threads.
    s.P = 1
    if nt > 1 and base_tasks < 4 * nt:
        s.P = min(_cdiv(4 * nt, base_tasks), split_max)
    cdef Py_ssize_t ntasks = base_tasks * s.P, t
    if nt > 1:
        nt = threads_now()
    if nt > ntasks:
        nt = <int>ntasks
    cdef double* pv = NULL
    cdef char* pn = NULL
    if s.P > 1:
        pv = <double*>malloc(s.P * s.K * sizeof(double))
        pn = <char*>malloc(s.P * s.K)
        if pv == NULL or pn == NULL:
            free(pv); free(pn)
            raise MemoryError()
    cdef int err = 0
    s.err = &err
    with nogil:
        if nt > 1:
            for t in prange(ntasks, schedule='dynamic', num_threads=nt):
                fr_task(&s, f64, xp, op_, pv, pn, t)
        else:
            for t in range(ntasks):
                fr_task(&s, f64, xp, op_, pv, pn, t)
        if s.P > 1:
            fr_combine(&s, f64, op_, pv, pn)
    free(pv)
    free(pn)
    if err:
        raise MemoryError()
    return _DONE
