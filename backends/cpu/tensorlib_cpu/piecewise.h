/* The loops of the one-pass elementwise activations with parameters (piecewise_kernels.pyx,
   exp_activation_kernels.pyx): each defines its float32/float64 forward and backward from
   two C expressions over rows of unit stride, the rows shared among the OpenMP threads. */
#ifndef TENSORLIB_PIECEWISE_H
#define TENSORLIB_PIECEWISE_H
#define PW_PAR_MIN 65536
#define PW_BLK 4096
/* The threads share pieces of PW_BLK elements of the rows (a 1-D tensor splits too).
   One thread runs outside any parallel region: entering one, even of one thread, cost
   0.6 us, as much as the rest of a 16-float call. */
#define PW_PIECE(...)                                                                   \
    {   Py_ssize_t r = p / per_row, lo = p % per_row * PW_BLK;                          \
        Py_ssize_t hi = lo + PW_BLK < n ? lo + PW_BLK : n;                              \
        __VA_ARGS__ }
#define PW_PIECES(rows, n, nt, ...)                                                     \
    Py_ssize_t per_row = ((n) + PW_BLK - 1) / PW_BLK, p, i;                             \
    if ((nt) <= 1) {                                                                    \
        for (p = 0; p < (rows) * per_row; p++) PW_PIECE(__VA_ARGS__)                    \
    } else {                                                                            \
        _Pragma("omp parallel for private(i) num_threads(nt)")                          \
        for (p = 0; p < (rows) * per_row; p++) PW_PIECE(__VA_ARGS__)                    \
    }
/* NAME_T(x, sx, y, rows, n, params, nt): y = FWD, an expression of v = x[i] and the
   parameters a, b, c (of type R, T's name there). NAME_bwd_T(g, sg, g_full, x, sx, o, rows,
   n, params, nt): o = BWD, of v, the gradient gi (g[i], or g[0] broadcast) and a, b, c. */
#define DEFINE_PIECEWISE(NAME, T, FWD, BWD)                                             \
static void NAME##_##T(const T* x, Py_ssize_t sx, T* y, Py_ssize_t rows, Py_ssize_t n,  \
                       const double* prm, int nt) {                                     \
    typedef T R;               /* the type the expressions name */                      \
    const T a = (T)prm[0], b = (T)prm[1], c = (T)prm[2];                               \
    (void)a; (void)b; (void)c; (void)(R)0;                                             \
    PW_PIECES(rows, n, nt,                                                              \
        const T* xr = x + r * sx; T* yr = y + r * n;                                    \
        _Pragma("omp simd")                                                             \
        for (i = lo; i < hi; i++) { T v = xr[i]; yr[i] = (FWD); })                      \
}                                                                                       \
static void NAME##_bwd_##T(const T* g, Py_ssize_t sg, int g_full, const T* x,          \
                           Py_ssize_t sx, T* o, Py_ssize_t rows, Py_ssize_t n,          \
                           const double* prm, int nt) {                                 \
    typedef T R;                                                                        \
    const T a = (T)prm[0], b = (T)prm[1], c = (T)prm[2], gv = g[0];                    \
    (void)a; (void)b; (void)c; (void)(R)0;                                             \
    if (g_full) {                                                                       \
        PW_PIECES(rows, n, nt,                                                          \
            const T* gr = g + r * sg; const T* xr = x + r * sx; T* orow = o + r * n;    \
            _Pragma("omp simd")                                                         \
            for (i = lo; i < hi; i++) { T v = xr[i], gi = gr[i]; orow[i] = (BWD); })    \
    } else {                                                                            \
        PW_PIECES(rows, n, nt,                                                          \
            const T* xr = x + r * sx; T* orow = o + r * n;                              \
            _Pragma("omp simd")                                                         \
            for (i = lo; i < hi; i++) { T v = xr[i], gi = gv; orow[i] = (BWD); })       \
    }                                                                                   \
}
#endif
