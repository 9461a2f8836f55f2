# cython: boundscheck=False, wraparound=False, cdivision=True
"""exp, erf, and sigmoid, tanh, GELU and SiLU forward and backward, as one vectorised pass
each (float32 exp from vexp.h's AVX-512 or AVX2 kernels; the rest from glibc's libmvec in
`omp simd` loops). numpy's float32 exp ran at ~0.5x PyTorch's on an Intel Xeon and ~0.3x on
an AMD EPYC Zen 3; vexp.h's at its speed, the memory's. Composed of numpy primitives sigmoid
took 8 passes and 8 allocations (~10x PyTorch on a 97x51 float64 LSTM gate) and np.tanh runs
at ~0.4x PyTorch's; these run the LSTM cell's gates at PyTorch's speed. erf was scipy's, on
one thread: GELU (whose exact form is x * (1 + erf(x / sqrt 2)) / 2) took 19 ms on 1M floats against PyTorch's 0.6.

Each kernel handles contiguous float32/float64 tensors of one shape and returns False
(writing nothing) otherwise; the callers then take the general path."""
import numpy as np
import scipy.special

cimport numpy as cnp

from tensorlib._C.tensor_impl cimport TensorImpl, is_contiguous, numel

from tensorlib_cpu import fastreduce
from tensorlib_cpu.ufunc_kernels import UfuncKernel

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #include <stdint.h>
    #include <string.h>
    #include "fastmath_guards.h"
    #include "vexp.h"
    #include "ncdf_table.h"
    #define PAR_MIN 65536
    /* The threads share pieces of BLK elements of the rows, so one long row (a 1-D tensor)
       splits too; the body runs over i in [lo, hi) of row r. */
    #define BLK 4096
    #define PIECE_BODY(n, ...)                                                              \\
        {   Py_ssize_t r = p / per_row, lo = p % per_row * BLK;                             \\
            Py_ssize_t hi = lo + BLK < (n) ? lo + BLK : (n);                                \\
            __VA_ARGS__ }
    /* one thread: no OpenMP region (entering one cost 0.5 us, a 16-float call's time) */
    #define FOR_PIECES(rows, n, nt, ...)                                                    \\
        Py_ssize_t per_row = ((n) + BLK - 1) / BLK, p, i;                                   \\
        if ((nt) <= 1 || (rows) * (n) < PAR_MIN) {                                          \\
            for (p = 0; p < (rows) * per_row; p++) PIECE_BODY(n, __VA_ARGS__)               \\
        } else {                                                                            \\
            _Pragma("omp parallel for private(i) num_threads(nt)")                          \\
            for (p = 0; p < (rows) * per_row; p++) PIECE_BODY(n, __VA_ARGS__)               \\
        }
    #define DEFINE_ACT(T)                                                                   \\
    static void sigmoid_##T(const T* x, Py_ssize_t sx, T* y, Py_ssize_t rows, Py_ssize_t n, \\
                            int nt) {                                                       \\
        FOR_PIECES(rows, n, nt,                                                             \\
            const T* xr = x + r * sx; T* yr = y + r * n;                                    \\
            _Pragma("omp simd")                                                             \\
            for (i = lo; i < hi; i++) yr[i] = safe_sigmoid_##T(xr[i]);)                     \\
    }                                                                                       \\
    static void sigmoid_bwd_##T(const T* g, Py_ssize_t sg, const T* y, Py_ssize_t sy, T* o, \\
                                Py_ssize_t rows, Py_ssize_t n, int nt) {                    \\
        FOR_PIECES(rows, n, nt,                                                             \\
            const T* gr = g + r * sg; const T* yr = y + r * sy; T* orow = o + r * n;        \\
            _Pragma("omp simd")                                                             \\
            for (i = lo; i < hi; i++) orow[i] = gr[i] * (yr[i] * ((T)1 - yr[i]));)          \\
    }                                                                                       \\
    /* SiLU, x * sigmoid(x), and its derivative s * (1 + x (1 - s)) from the input x, with  \
       1 - s taken as e s (e = exp(-x), sigmoid_complement): 1 - s cancelled where s is     \
       near 1, and where the build's reciprocal is an estimate and a Newton step (AVX2      \
       under fast-math) s came out an ulp below 1, so the slope read 1 + 3.5e-6 at x = 59. */ \
    static void silu_##T(const T* x, Py_ssize_t sx, T* y, Py_ssize_t rows, Py_ssize_t n,    \
                         int nt) {                                                          \
        FOR_PIECES(rows, n, nt,                                                             \
            const T* xr = x + r * sx; T* yr = y + r * n;                                    \
            _Pragma("omp simd")                                                             \
            for (i = lo; i < hi; i++) {        /* -inf * 0 is NaN, as in torch (no fast-math 0) */\
                T v = xr[i] * safe_sigmoid_##T(xr[i]);                                      \
                yr[i] = isinf_##T(xr[i]) && xr[i] < 0 ? (T)NAN : v;                         \
            })                                                                              \
    }                                                                                       \
    static void silu_bwd_##T(const T* g, Py_ssize_t sg, const T* x, Py_ssize_t sx, T* o,    \
                             Py_ssize_t rows, Py_ssize_t n, int nt) {                       \
        FOR_PIECES(rows, n, nt,                                                             \
            const T* gr = g + r * sg; const T* xr = x + r * sx; T* orow = o + r * n;        \
            _Pragma("omp simd")                                                             \
            for (i = lo; i < hi; i++) {                                                     \
                T s = safe_sigmoid_##T(xr[i]), c = sigmoid_complement_##T(xr[i]);          \
                T d = gr[i] * (s * ((T)1 + xr[i] * c));                                     \
                orow[i] = isinf_##T(xr[i]) || nan_##T(xr[i]) ? (T)NAN : d;                  \
            })                                                                              \
    }                                                                                       \
    static void tanh_bwd_##T(const T* g, Py_ssize_t sg, const T* y, Py_ssize_t sy, T* o,    \\
                             Py_ssize_t rows, Py_ssize_t n, int nt) {                       \\
        FOR_PIECES(rows, n, nt,                                                             \\
            const T* gr = g + r * sg; const T* yr = y + r * sy; T* orow = o + r * n;        \\
            _Pragma("omp simd")                                                             \\
            for (i = lo; i < hi; i++) orow[i] = gr[i] * ((T)1 - yr[i] * yr[i]);)            \\
    }
    /* y = FN(x) for a libmvec function that saturates beyond +-LIM (tanh, erf): the argument
       is clamped there (fast-math does not promise inf), NaN passes through. */
    #define DEFINE_SATURATING(NAME, T, FN, LIM)                                             \\
    static void NAME##_##T(const T* x, Py_ssize_t sx, T* y, Py_ssize_t rows, Py_ssize_t n,  \\
                           int nt) {                                                        \\
        FOR_PIECES(rows, n, nt,                                                             \\
            const T* xr = x + r * sx; T* yr = y + r * n;                                    \\
            _Pragma("omp simd")                                                             \\
            for (i = lo; i < hi; i++) {                                                     \\
                T v = xr[i] > (T)LIM ? (T)LIM : (xr[i] < (T)-LIM ? (T)-LIM : xr[i]);        \\
                yr[i] = nan_##T(xr[i]) ? xr[i] : FN(v);                                     \\
            })                                                                              \\
    }
    /* GELU, exact (x * (1 + erf(x / sqrt 2)) / 2) or its tanh approximation (x * (1 +
       tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2), and its derivative. Past +-10 both are
       x (or -0) and 1 (or 0): the erf/tanh argument is clamped there, so libmvec never sees
       an infinity. As the composite they replace: gelu(+inf) = +inf, gelu(-inf) = NaN, and
       the derivative at +-inf is NaN; NaN passes through. */
    #define GELU_LIM 10
    #define GELU_K 0.7978845608028654       /* sqrt(2 / pi) */
    #define GELU_C 0.044715
    #define GELU_PHI 0.3989422804014327     /* 1 / sqrt(2 pi) */
    /* Phi(v) in float32: Numerical Recipes' erfcc (fractional error under 1.2e-7), taken
       on |v| so the lower tail has no cancellation: GELU within 2e-5 relative down to -10,
       1.5e-6 for |x| < 3 (against float64), where libmvec's erff took 0.46 ms for 1M floats
       and the whole GELU 0.56-0.89 (PyTorch's, with a cruder erf: 0.24). float64 takes
       libmvec's erfc. */
    static inline float gelu_ncdf_float(float v) {
        float z = fabsf(v) * 0.70710678f, t = 1.0f / (1.0f + 0.5f * z), p = 0.17087277f;
        p = p * t - 0.82215223f; p = p * t + 1.48851587f; p = p * t - 1.13520398f;
        p = p * t + 0.27886807f; p = p * t - 0.18628806f; p = p * t + 0.09678418f;
        p = p * t + 0.37409196f; p = p * t + 1.00002368f;
        float half = 0.5f * t * expf(-z * z - 1.26551223f + t * p);
        return v < 0 ? half : 1.0f - half;
    }
    static inline double gelu_ncdf_double(double v) {     /* erfc: no cancellation below */
        return 0.5 * erfc(v * -0.7071067811865476);
    }
    /* float32 exact GELU and its derivative, 16 lanes, in AVX-512 builds: Phi from
       ncdf_table.h's pieces (a rounding, a conversion, 8 two-register permutes and 7 FMAs:
       no division and no exp), relative error under 2e-7 down to -5 and 1e-5 to -10. 1M
       floats on one Zen 4 core: 0.44 ms forward (NR's erfc above: 0.91, PyTorch's 0.46),
       0.71 backward (1.15; PyTorch's 0.81). */
    #if TL_HAVE_VEXP
    /* Q(a) = P(N(0, 1) > a) for a in [0, GELU_LIM] (past it, the last piece's polynomial:
       the callers overwrite those lanes); NaN gives NaN (min keeps the last piece for it) */
    static inline __m512 gelu_tail16(__m512 a) {
        __m512 f = _mm512_roundscale_ps(_mm512_mul_ps(a, _mm512_set1_ps(NCDF_INV_H)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        f = _mm512_min_ps(f, _mm512_set1_ps(NCDF_PIECES - 1));
        __m512i piece = _mm512_cvttps_epi32(f);
        __m512 u = _mm512_fnmadd_ps(f, _mm512_set1_ps(NCDF_H), a);
        #define NCDF_COEF(k) _mm512_permutex2var_ps(_mm512_load_ps(NCDF_Q[k]), piece,      \\
                                                    _mm512_load_ps(NCDF_Q[k] + 16))
        __m512 p = NCDF_COEF(7);
        p = _mm512_fmadd_ps(p, u, NCDF_COEF(6)); p = _mm512_fmadd_ps(p, u, NCDF_COEF(5));
        p = _mm512_fmadd_ps(p, u, NCDF_COEF(4)); p = _mm512_fmadd_ps(p, u, NCDF_COEF(3));
        p = _mm512_fmadd_ps(p, u, NCDF_COEF(2)); p = _mm512_fmadd_ps(p, u, NCDF_COEF(1));
        p = _mm512_fmadd_ps(p, u, NCDF_COEF(0));
        #undef NCDF_COEF
        return p;
    }
    /* Phi(v) = Q(-v) below 0, 1 - Q(v) from 0 on */
    static inline __m512 gelu_ncdf16(__m512 v) {
        __m512 q = gelu_tail16(_mm512_abs_ps(v));
        __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
        return _mm512_mask_blend_ps(neg, _mm512_sub_ps(_mm512_set1_ps(1.0f), q), q);
    }
    static inline __mmask16 gelu_lanes(Py_ssize_t left) {
        return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
    }
    /* GELU of 16 lanes: x past GELU_LIM itself, below -GELU_LIM 0 (NaN at -inf) */
    static inline __m512 gelu_exact16(__m512 xi) {
        const __m512 lim = _mm512_set1_ps(GELU_LIM);
        __m512 g = _mm512_mul_ps(xi, gelu_ncdf16(xi));
        g = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(xi, lim, _CMP_GT_OQ), g, xi);
        __m512 low = _mm512_mask_blend_ps(
            _mm512_cmp_ps_mask(xi, _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ),
            _mm512_setzero_ps(), _mm512_set1_ps(NAN));
        __mmask16 below = _mm512_cmp_ps_mask(xi, _mm512_set1_ps(-GELU_LIM), _CMP_LT_OQ);
        return _mm512_mask_blend_ps(below, g, low);
    }
    static int gelu_exact_vec_float(const float* x, float* y, Py_ssize_t n) {
        Py_ssize_t i = 0;
        for (; i + 16 <= n; i += 16)
            _mm512_storeu_ps(y + i, gelu_exact16(_mm512_loadu_ps(x + i)));
        if (i < n) {
            __mmask16 m = gelu_lanes(n - i);
            _mm512_mask_storeu_ps(y + i, m, gelu_exact16(_mm512_maskz_loadu_ps(m, x + i)));
        }
        return 1;
    }
    /* grad * GELU'(x) of 16 lanes: past +-GELU_LIM a slope of 1 or 0, NaN at +-inf and NaN */
    static inline __m512 gelu_exact_bwd16(__m512 g, __m512 xi) {
        __m512 half_sq = _mm512_mul_ps(_mm512_set1_ps(-0.5f), _mm512_mul_ps(xi, xi));
        __m512 pdf = _mm512_mul_ps(_mm512_set1_ps(GELU_PHI), tl_exp16(half_sq));
        __m512 d = _mm512_fmadd_ps(xi, pdf, gelu_ncdf16(xi));
        __mmask16 high = _mm512_cmp_ps_mask(xi, _mm512_set1_ps(GELU_LIM), _CMP_GT_OQ);
        __mmask16 low = _mm512_cmp_ps_mask(xi, _mm512_set1_ps(-GELU_LIM), _CMP_LT_OQ);
        __mmask16 bad = _mm512_cmp_ps_mask(_mm512_abs_ps(xi), _mm512_set1_ps(INFINITY),
                                           _CMP_NLT_UQ);                 /* inf or NaN */
        d = _mm512_mask_blend_ps(high, d, _mm512_set1_ps(1.0f));
        d = _mm512_mask_blend_ps(low, d, _mm512_setzero_ps());
        return _mm512_mask_blend_ps(bad, _mm512_mul_ps(g, d), _mm512_set1_ps(NAN));
    }
    static int gelu_exact_bwd_vec_float(const float* gr, const float* x, float* o, Py_ssize_t n) {
        Py_ssize_t i = 0;
        for (; i + 16 <= n; i += 16)
            _mm512_storeu_ps(o + i, gelu_exact_bwd16(_mm512_loadu_ps(gr + i),
                                                     _mm512_loadu_ps(x + i)));
        if (i < n) {
            __mmask16 m = gelu_lanes(n - i);
            _mm512_mask_storeu_ps(o + i, m, gelu_exact_bwd16(_mm512_maskz_loadu_ps(m, gr + i),
                                                              _mm512_maskz_loadu_ps(m, x + i)));
        }
        return 1;
    }
    #else
    static int gelu_exact_vec_float(const float* x, float* y, Py_ssize_t n) { return 0; }
    static int gelu_exact_bwd_vec_float(const float* gr, const float* x, float* o, Py_ssize_t n) { return 0; }
    #endif
    static int gelu_exact_vec_double(const double* x, double* y, Py_ssize_t n) { return 0; }
    static int gelu_exact_bwd_vec_double(const double* gr, const double* x, double* o,
                                         Py_ssize_t n) { return 0; }
    #define GELU_CLAMP(T, x) ((x) > GELU_LIM ? (T)GELU_LIM : ((x) < -GELU_LIM ? (T)-GELU_LIM : (x)))
    #define GELU_TANH_CDF(T, TANH, v, t)                                                    \
        T u = (T)GELU_K * (v + (T)GELU_C * v * v * v);                                      \
        T t = TANH(u > 20 ? (T)20 : (u < -20 ? (T)-20 : u));
    /* the form is chosen outside the vector loops (inside, gcc computes both and selects) */
    #define DEFINE_GELU(T, EXP, TANH)                                                       \
    static inline T gelu_out_##T(T xi, T g) {                                               \
        g = xi > GELU_LIM ? xi : (xi < -GELU_LIM ? (T)0 : g);                               \
        return nan_##T(xi) ? xi : (xi < -GELU_LIM && isinf_##T(xi) ? (T)NAN : g);           \
    }                                                                                       \
    static void gelu_##T(const T* x, Py_ssize_t sx, T* y, Py_ssize_t rows, Py_ssize_t n,    \
                         int tanh_form, int nt) {                                           \
        FOR_PIECES(rows, n, nt,                                                             \
            const T* xr = x + r * sx; T* yr = y + r * n;                                    \
            if (tanh_form) {                                                                \
                _Pragma("omp simd")                                                         \
                for (i = lo; i < hi; i++) {                                                 \
                    T v = GELU_CLAMP(T, xr[i]);                                             \
                    GELU_TANH_CDF(T, TANH, v, t)                                            \
                    yr[i] = gelu_out_##T(xr[i], v * (T)0.5 * ((T)1 + t));                   \
                }                                                                           \
            } else if (!gelu_exact_vec_##T(xr + lo, yr + lo, hi - lo)) {                    \
                _Pragma("omp simd")                                                         \
                for (i = lo; i < hi; i++) {                                                 \
                    T v = GELU_CLAMP(T, xr[i]);                                             \
                    yr[i] = gelu_out_##T(xr[i], v * gelu_ncdf_##T(v));                      \
                }                                                                           \
            })                                                                              \
    }                                                                                       \
    static inline T gelu_grad_##T(T xi, T g, T d) {                                         \
        d = xi > GELU_LIM ? (T)1 : (xi < -GELU_LIM ? (T)0 : d);                             \
        return nan_##T(xi) || isinf_##T(xi) ? (T)NAN : g * d;                               \
    }                                                                                       \
    static void gelu_bwd_##T(const T* g, Py_ssize_t sg, const T* x, Py_ssize_t sx, T* o,    \
                             Py_ssize_t rows, Py_ssize_t n, int tanh_form, int nt) {        \
        FOR_PIECES(rows, n, nt,                                                             \
            const T* gr = g + r * sg; const T* xr = x + r * sx; T* orow = o + r * n;        \
            if (tanh_form) {                                                                \
                _Pragma("omp simd")                                                         \
                for (i = lo; i < hi; i++) {                                                 \
                    T v = GELU_CLAMP(T, xr[i]);                                             \
                    GELU_TANH_CDF(T, TANH, v, t)                                            \
                    T d = (T)0.5 * ((T)1 + t) + (T)0.5 * v * ((T)1 - t * t) * (T)GELU_K     \
                          * ((T)1 + (T)(3 * GELU_C) * v * v);                               \
                    orow[i] = gelu_grad_##T(xr[i], gr[i], d);                               \
                }                                                                           \
            } else if (!gelu_exact_bwd_vec_##T(gr + lo, xr + lo, orow + lo, hi - lo)) {     \
                _Pragma("omp simd")                                                         \
                for (i = lo; i < hi; i++) {                                                 \
                    T v = GELU_CLAMP(T, xr[i]);                                             \
                    T d = gelu_ncdf_##T(v) + v * (T)GELU_PHI * EXP((T)-0.5 * v * v);        \
                    orow[i] = gelu_grad_##T(xr[i], gr[i], d);                               \
                }                                                                           \
            })                                                                              \
    }
    static inline int isinf_float(float x) {
        uint32_t u; memcpy(&u, &x, 4); return (u & 0x7fffffffu) == 0x7f800000u; }
    static inline int isinf_double(double x) {
        uint64_t u; memcpy(&u, &x, 8);
        return (u & 0x7fffffffffffffffull) == 0x7ff0000000000000ull; }
    DEFINE_GELU(float, expf, tanhf)
    DEFINE_GELU(double, exp, tanh)
    /* each form with the signature the runners (_unary, _binary) take */
    #define DEFINE_GELU_FORM(FORM, TANH_FORM, T)                                            \
    static void gelu_##FORM##_##T(const T* x, Py_ssize_t sx, T* y, Py_ssize_t rows,        \
                                  Py_ssize_t n, int nt) {                                   \
        gelu_##T(x, sx, y, rows, n, TANH_FORM, nt);                                         \
    }                                                                                       \
    static void gelu_bwd_##FORM##_##T(const T* g, Py_ssize_t sg, const T* x, Py_ssize_t sx, \
                                      T* o, Py_ssize_t rows, Py_ssize_t n, int nt) {        \
        gelu_bwd_##T(g, sg, x, sx, o, rows, n, TANH_FORM, nt);                              \
    }
    DEFINE_GELU_FORM(exact, 0, float)
    DEFINE_GELU_FORM(exact, 0, double)
    DEFINE_GELU_FORM(tanh, 1, float)
    DEFINE_GELU_FORM(tanh, 1, double)
    DEFINE_ACT(float)
    DEFINE_ACT(double)
    DEFINE_SATURATING(tanh, float, tanhf, 20)
    DEFINE_SATURATING(tanh, double, tanh, 40)
    DEFINE_SATURATING(erf, float, erff, 10)
    DEFINE_SATURATING(erf, double, erf, 10)
    /* y = exp(x) over n contiguous floats, in shares of whole 16-lane vectors per thread */
    static void exp_flat_float(const float* x, float* y, Py_ssize_t n, int nt) {
        Py_ssize_t step = ((n + nt - 1) / nt + 15) / 16 * 16;
        int t;
        if (nt <= 1) {                  /* no OpenMP region (as FOR_PIECES) */
            tl_exp_float(x, y, n);
            return;
        }
        _Pragma("omp parallel for num_threads(nt)")
        for (t = 0; t < nt; t++) {
            Py_ssize_t lo = t * step, hi = lo + step < n ? lo + step : n;
            if (lo < hi) tl_exp_float(x + lo, y + lo, hi - lo);
        }
    }
    """
    Py_ssize_t PAR_MIN
    int TL_HAVE_VEXP
    int TL_HAVE_VEXP8
    void exp_flat_float(const float* x, float* y, Py_ssize_t n, int nt) nogil
    void sigmoid_float(const float* x, Py_ssize_t sx, float* y, Py_ssize_t rows, Py_ssize_t n,
                       int nt) nogil
    void sigmoid_double(const double* x, Py_ssize_t sx, double* y, Py_ssize_t rows,
                        Py_ssize_t n, int nt) nogil
    void tanh_float(const float* x, Py_ssize_t sx, float* y, Py_ssize_t rows, Py_ssize_t n,
                    int nt) nogil
    void tanh_double(const double* x, Py_ssize_t sx, double* y, Py_ssize_t rows, Py_ssize_t n,
                     int nt) nogil
    void erf_float(const float* x, Py_ssize_t sx, float* y, Py_ssize_t rows, Py_ssize_t n,
                   int nt) nogil
    void erf_double(const double* x, Py_ssize_t sx, double* y, Py_ssize_t rows, Py_ssize_t n,
                    int nt) nogil
    void sigmoid_bwd_float(const float* g, Py_ssize_t sg, const float* y, Py_ssize_t sy,
                           float* o, Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    void sigmoid_bwd_double(const double* g, Py_ssize_t sg, const double* y, Py_ssize_t sy,
                            double* o, Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    void tanh_bwd_float(const float* g, Py_ssize_t sg, const float* y, Py_ssize_t sy,
                        float* o, Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    void tanh_bwd_double(const double* g, Py_ssize_t sg, const double* y, Py_ssize_t sy,
                         double* o, Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    void silu_float(const float* x, Py_ssize_t sx, float* y, Py_ssize_t rows, Py_ssize_t n,
                    int nt) nogil
    void silu_double(const double* x, Py_ssize_t sx, double* y, Py_ssize_t rows, Py_ssize_t n,
                     int nt) nogil
    void silu_bwd_float(const float* g, Py_ssize_t sg, const float* x, Py_ssize_t sx,
                        float* o, Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    void silu_bwd_double(const double* g, Py_ssize_t sg, const double* x, Py_ssize_t sx,
                         double* o, Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    void gelu_exact_float(const float* x, Py_ssize_t sx, float* y, Py_ssize_t rows,
                          Py_ssize_t n, int nt) nogil
    void gelu_exact_double(const double* x, Py_ssize_t sx, double* y, Py_ssize_t rows,
                           Py_ssize_t n, int nt) nogil
    void gelu_tanh_float(const float* x, Py_ssize_t sx, float* y, Py_ssize_t rows,
                         Py_ssize_t n, int nt) nogil
    void gelu_tanh_double(const double* x, Py_ssize_t sx, double* y, Py_ssize_t rows,
                          Py_ssize_t n, int nt) nogil
    void gelu_bwd_exact_float(const float* g, Py_ssize_t sg, const float* x, Py_ssize_t sx,
                              float* o, Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    void gelu_bwd_exact_double(const double* g, Py_ssize_t sg, const double* x, Py_ssize_t sx,
                               double* o, Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    void gelu_bwd_tanh_float(const float* g, Py_ssize_t sg, const float* x, Py_ssize_t sx,
                             float* o, Py_ssize_t rows, Py_ssize_t n, int nt) nogil
    void gelu_bwd_tanh_double(const double* g, Py_ssize_t sg, const double* x, Py_ssize_t sx,
                              double* o, Py_ssize_t rows, Py_ssize_t n, int nt) nogil


cdef struct Rows:
    bint single
    Py_ssize_t rows, n
    Py_ssize_t stride[2]
    void* data[3]


cdef bint _rows(TensorImpl out, TensorImpl a, TensorImpl b, Rows* r):
    """The operands as rows of a (rows, n) matrix, each with unit stride along a row and its
    own row stride (elements): the layout of a contiguous tensor or of a narrow() of one along
    the last dim (an LSTM's gates). False for other dtypes, shapes or layouts."""
    if out._dtype.np.type is np.float32:
        r.single = True
    elif out._dtype.np.type is np.float64:
        r.single = False
    else:
        return False
    cdef tuple sizes = out._sizes
    cdef Py_ssize_t n = sizes[len(sizes) - 1] if sizes else 1
    if n == 0 or not is_contiguous(out):
        return False
    r.n = n
    r.rows = numel(sizes) // n
    r.data[2] = _data(out)
    cdef int i = 0
    for t in (a, b):
        if t is None:
            break
        if (<TensorImpl>t)._dtype is not out._dtype or (<TensorImpl>t)._sizes != sizes:
            return False
        if not _row_stride(<TensorImpl>t, &r.stride[i]):
            return False
        r.data[i] = _data(<TensorImpl>t)
        i += 1
    return True


cdef bint _row_stride(TensorImpl t, Py_ssize_t* out):
    """Whether t reads as rows of unit stride whose starts are equally spaced (its leading
    dims collapse into one); the spacing in elements."""
    cdef tuple sizes = t._sizes, strides = t._strides
    cdef Py_ssize_t nd = len(sizes), i, step = -1, expect = 0
    if nd and sizes[nd - 1] != 1 and strides[nd - 1] != 1:
        return False
    for i in range(nd - 2, -1, -1):
        if sizes[i] == 1:
            continue
        if step < 0:
            step = strides[i]
            expect = step * <Py_ssize_t>sizes[i]
        elif strides[i] != expect:
            return False
        else:
            expect *= <Py_ssize_t>sizes[i]
    out[0] = step if step >= 0 else (sizes[nd - 1] if nd else 1)
    return True


cdef inline int _threads(Py_ssize_t n):
    return fastreduce.threads_now() if n >= PAR_MIN else 1


cdef inline void* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + t._offset * t._dtype.itemsize


ctypedef void (*unary_float)(const float*, Py_ssize_t, float*, Py_ssize_t, Py_ssize_t,
                             int) noexcept nogil
ctypedef void (*unary_double)(const double*, Py_ssize_t, double*, Py_ssize_t, Py_ssize_t,
                              int) noexcept nogil


ctypedef void (*binary_float)(const float*, Py_ssize_t, const float*, Py_ssize_t, float*,
                              Py_ssize_t, Py_ssize_t, int) noexcept nogil
ctypedef void (*binary_double)(const double*, Py_ssize_t, const double*, Py_ssize_t, double*,
                               Py_ssize_t, Py_ssize_t, int) noexcept nogil


cdef bint _binary(binary_float f32, binary_double f64, TensorImpl out, TensorImpl a,
                  TensorImpl b):
    """out = f(a, b) (a backward: the gradient and a saved tensor) in one pass of the
    float32 or float64 kernel; False for other layouts."""
    cdef Rows r
    if not _rows(out, a, b, &r):
        return False
    cdef int nt = _threads(r.rows * r.n)
    if r.rows * r.n < PAR_MIN:          # a small pass keeps the GIL: its release costs more
        _run_binary(f32, f64, &r, nt)
    else:
        with nogil:
            _run_binary(f32, f64, &r, nt)
    return True


cdef void _run_binary(binary_float f32, binary_double f64, Rows* r, int nt) noexcept nogil:
    if r.single:
        f32(<float*>r.data[0], r.stride[0], <float*>r.data[1], r.stride[1],
            <float*>r.data[2], r.rows, r.n, nt)
    else:
        f64(<double*>r.data[0], r.stride[0], <double*>r.data[1], r.stride[1],
            <double*>r.data[2], r.rows, r.n, nt)


cdef bint _unary(unary_float f32, unary_double f64, TensorImpl out, TensorImpl x):
    """out = f(x) in one pass of the float32 or float64 kernel; False for other layouts."""
    cdef Rows r
    if not _rows(out, x, None, &r):
        return False
    cdef int nt = _threads(r.rows * r.n)
    if r.rows * r.n < PAR_MIN:          # as in _binary
        _run_unary(f32, f64, &r, nt)
    else:
        with nogil:
            _run_unary(f32, f64, &r, nt)
    return True


cdef void _run_unary(unary_float f32, unary_double f64, Rows* r, int nt) noexcept nogil:
    if r.single:
        f32(<float*>r.data[0], r.stride[0], <float*>r.data[2], r.rows, r.n, nt)
    else:
        f64(<double*>r.data[0], r.stride[0], <double*>r.data[2], r.rows, r.n, nt)


def sigmoid(TensorImpl out, TensorImpl x):
    """out = 1 / (1 + exp(-x)); False for layouts it does not take."""
    return _unary(sigmoid_float, sigmoid_double, out, x)


def tanh_fast(TensorImpl out, TensorImpl x):
    """out = tanh(x); False for layouts it does not take."""
    return _unary(tanh_float, tanh_double, out, x)


_tanh_general = UfuncKernel(np.tanh, quiet=True)


def tanh(TensorImpl out, TensorImpl x):
    """The primitive tanh: the vectorised pass where it applies, numpy's ufunc otherwise."""
    if not tanh_fast(out, x):
        _tanh_general(out, x)


_erf_general = UfuncKernel(scipy.special.erf, quiet=True)


def erf(TensorImpl out, TensorImpl x):
    """The primitive erf: one vectorised pass (libmvec) for the layouts sigmoid takes,
    scipy's ufunc otherwise."""
    if not _unary(erf_float, erf_double, out, x):
        _erf_general(out, x)


def sigmoid_backward(TensorImpl out, TensorImpl grad, TensorImpl y):
    """out = grad * y * (1 - y), y the sigmoid's output; False for layouts it does not take."""
    return _binary(sigmoid_bwd_float, sigmoid_bwd_double, out, grad, y)


def tanh_backward(TensorImpl out, TensorImpl grad, TensorImpl y):
    """out = grad * (1 - y * y), y the tanh's output; False for layouts it does not take."""
    return _binary(tanh_bwd_float, tanh_bwd_double, out, grad, y)


def silu(TensorImpl out, TensorImpl x):
    """out = x * sigmoid(x) in one pass; False for layouts it does not take."""
    return _unary(silu_float, silu_double, out, x)


def silu_backward(TensorImpl out, TensorImpl grad, TensorImpl x):
    """out = grad * SiLU'(x), x the forward's input; False for layouts it does not take."""
    return _binary(silu_bwd_float, silu_bwd_double, out, grad, x)


cdef bint _tanh_form(str approximate) except -1:
    if approximate == "none":
        return False
    if approximate == "tanh":
        return True
    raise RuntimeError("approximate argument must be either none or tanh.")


def gelu(TensorImpl out, TensorImpl x, str approximate="none"):
    """out = GELU(x), exact or its tanh approximation, in one pass; False for layouts it
    does not take (the op then composes it from erf or tanh)."""
    if _tanh_form(approximate):
        return _unary(gelu_tanh_float, gelu_tanh_double, out, x)
    return _unary(gelu_exact_float, gelu_exact_double, out, x)


def gelu_backward(TensorImpl out, TensorImpl grad, TensorImpl x, str approximate="none"):
    """out = grad * GELU'(x), x the forward's input; False for layouts it does not take."""
    if _tanh_form(approximate):
        return _binary(gelu_bwd_tanh_float, gelu_bwd_tanh_double, out, grad, x)
    return _binary(gelu_bwd_exact_float, gelu_bwd_exact_double, out, grad, x)


_exp_general = UfuncKernel(np.exp, quiet=True)


def exp(TensorImpl out, TensorImpl x):
    """The primitive exp: vexp.h's pass for contiguous float32 tensors of one shape (in place,
    or not overlapping) in AVX2 and AVX-512 builds, numpy's ufunc (on the backend's threads)
    otherwise."""
    cdef Py_ssize_t n
    cdef int nt
    cdef float* src
    cdef float* dst
    if (TL_HAVE_VEXP8 and out._dtype.np.type is np.float32 and x._dtype is out._dtype
            and x._sizes == out._sizes and is_contiguous(out) and is_contiguous(x)
            and (x._storage is not out._storage or x._offset == out._offset)):
        n = numel(out._sizes)
        nt = _threads(n)
        src, dst = <float*>_data(x), <float*>_data(out)
        if n < PAR_MIN:                 # as in _binary
            exp_flat_float(src, dst, n, nt)
            return
        with nogil:
            exp_flat_float(src, dst, n, nt)
        return
    _exp_general(out, x)


# whether float32 exp runs on vexp.h (an AVX2 or AVX-512 build), as the compiled kernels'
# tl_expf does
VEXP = bool(TL_HAVE_VEXP8)
# whether float32's exact GELU runs on ncdf_table.h's pieces (AVX-512 builds: within 3e-7 of
# float64 above -3) rather than Numerical Recipes' erfc (within 2e-6 there)
GELU_TABLE = bool(TL_HAVE_VEXP)

KERNELS = {"exp": exp, "erf": erf, "sigmoid": sigmoid, "tanh": tanh,
           "sigmoid_backward": sigmoid_backward, "tanh_backward": tanh_backward,
           "gelu": gelu, "gelu_backward": gelu_backward,
           "silu": silu, "silu_backward": silu_backward}
