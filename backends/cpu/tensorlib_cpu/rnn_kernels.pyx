# cython: boundscheck=False, wraparound=False, cdivision=True
"""The LSTM cell's pointwise part, forward and backward, as one pass each (the contract of
NOTE [ Fused LSTM cell kernels ] in tensorlib/nn/_functional/lstm_cell.py). Composed of ops a
cell step was ten kernel calls forward (add, three sigmoids, two tanh, three muls, an add) and
about twenty backward, each paying the op layer's Python; the GEMMs stay addmm calls.

Gate order i, f, g, o (PyTorch's). The activated gates and tanh(c') are written out (the
forward's third output), so the backward computes no transcendental. Every operand is a 2-D float32/float64
matrix read by rows (unit stride along a row, any row stride); the outputs are contiguous. A
kernel returns False, writing nothing, for anything else."""
import numpy as np

cimport numpy as cnp

from tensorlib._C.tensor_impl cimport TensorImpl, is_contiguous

from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #include <stdint.h>
    #include <string.h>
    #define LSTM_PAR_MIN 4096
    #include "fastmath_guards.h"    /* nan_T, safe_sigmoid_T */
    static inline float lstm_tanh_float(float x) { return nan_float(x) ? x : tanhf(x); }
    /* libmvec's vector tanh takes ~1.8x its vector expm1 here; tanh x = e / (e + 2) with
       e = expm1(2x) keeps the relative accuracy near 0 that 1 - 2 / (exp(2x) + 1) loses */
    static inline double lstm_tanh_double(double x) {
        double v = 2.0 * x;
        v = v > 40.0 ? 40.0 : (v < -40.0 ? -40.0 : v);
        double e = expm1(v);
        return nan_double(x) ? x : e / (e + 2.0); }

    /* 512-bit vectors (8 doubles, libmvec's AVX-512 exp/expm1) where the build has
       AVX-512: gcc's tuning for the Intel AVX-512 cores prefers 256-bit */
    #if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
    #pragma GCC target("prefer-vector-width=512")
    #endif
    #define DEFINE_LSTM(T)                                                                    \\
    /* act = (sig(i), sig(f), tanh(g), sig(o), tanh(c')) of ig + hg (N, 5H);                 \\
       c' = f c + i g; h' = o tanh(c') */                                                     \\
    static void lstm_fwd_##T(const T* ig, Py_ssize_t sig_, const T* hg, Py_ssize_t shg,      \\
                             const T* c, Py_ssize_t sc, T* h_out, T* c_out, T* act,         \\
                             Py_ssize_t rows, Py_ssize_t H, int nt) {                        \\
        Py_ssize_t r, j;                                                                      \\
        _Pragma("omp parallel for private(j) num_threads(nt) if (nt > 1)")                   \\
        for (r = 0; r < rows; r++) {                                                          \\
            const T* a = ig + r * sig_; const T* b = hg + r * shg; const T* cr = c + r * sc;  \\
            T* A = act + r * 5 * H; T* hr = h_out + r * H; T* co = c_out + r * H;             \\
            _Pragma("omp simd")                                                               \\
            for (j = 0; j < 2 * H; j++) A[j] = safe_sigmoid_##T(a[j] + b[j]);                     \\
            _Pragma("omp simd")                                                               \\
            for (j = 0; j < H; j++) {                                                         \\
                A[2 * H + j] = lstm_tanh_##T(a[2 * H + j] + b[2 * H + j]);                    \\
                A[3 * H + j] = safe_sigmoid_##T(a[3 * H + j] + b[3 * H + j]);                     \\
            }                                                                                 \\
            _Pragma("omp simd")                                                               \\
            for (j = 0; j < H; j++) {                                                         \\
                T cn = A[H + j] * cr[j] + A[j] * A[2 * H + j];                                \\
                T t = lstm_tanh_##T(cn);                                                      \\
                co[j] = cn;                                                                   \\
                A[4 * H + j] = t;                                                             \\
                hr[j] = A[3 * H + j] * t;                                                     \\
            }                                                                                 \\
        }                                                                                     \\
    }                                                                                         \\
    /* From dh (or none), dc' (or none): the gradient of the pre-activation gates, and of c */ \\
    static void lstm_bwd_##T(const T* gh, Py_ssize_t sgh, const T* gc, Py_ssize_t sgc,       \\
                             const T* c, Py_ssize_t sc, const T* act, Py_ssize_t sact,        \\
                             T* g_gates, T* g_c, Py_ssize_t rows, Py_ssize_t H, int nt) {    \\
        Py_ssize_t r, j;                                                                      \\
        _Pragma("omp parallel for private(j) num_threads(nt) if (nt > 1)")                   \\
        for (r = 0; r < rows; r++) {                                                          \\
            const T* A = act + r * sact; const T* cr = c + r * sc;                            \\
            const T* ghr = gh ? gh + r * sgh : NULL; const T* gcr = gc ? gc + r * sgc : NULL; \\
            T* G = g_gates + r * 4 * H; T* gcp = g_c ? g_c + r * H : NULL;                    \\
            _Pragma("omp simd")                                                               \\
            for (j = 0; j < H; j++) {                                                         \\
                T i = A[j], f = A[H + j], g = A[2 * H + j], o = A[3 * H + j], t = A[4 * H + j]; \\
                T dh = ghr ? ghr[j] : (T)0;                                                   \\
                T dc = dh * o * ((T)1 - t * t) + (gcr ? gcr[j] : (T)0);                       \\
                G[j] = dc * g * (i * ((T)1 - i));                                             \\
                G[H + j] = dc * cr[j] * (f * ((T)1 - f));                                     \\
                G[2 * H + j] = dc * i * ((T)1 - g * g);                                       \\
                G[3 * H + j] = dh * t * (o * ((T)1 - o));                                     \\
                if (gcp) gcp[j] = dc * f;                                                     \\
            }                                                                                 \\
        }                                                                                     \\
    }
    DEFINE_LSTM(float)
    DEFINE_LSTM(double)
    """
    Py_ssize_t LSTM_PAR_MIN
    void lstm_fwd_float(const float* ig, Py_ssize_t sig_, const float* hg, Py_ssize_t shg,
                        const float* c, Py_ssize_t sc, float* h_out, float* c_out, float* act,
                        Py_ssize_t rows, Py_ssize_t H, int nt) nogil
    void lstm_fwd_double(const double* ig, Py_ssize_t sig_, const double* hg, Py_ssize_t shg,
                         const double* c, Py_ssize_t sc, double* h_out, double* c_out,
                         double* act, Py_ssize_t rows, Py_ssize_t H, int nt) nogil
    void lstm_bwd_float(const float* gh, Py_ssize_t sgh, const float* gc, Py_ssize_t sgc,
                        const float* c, Py_ssize_t sc, const float* act, Py_ssize_t sact,
                        float* g_gates, float* g_c, Py_ssize_t rows, Py_ssize_t H,
                        int nt) nogil
    void lstm_bwd_double(const double* gh, Py_ssize_t sgh, const double* gc, Py_ssize_t sgc,
                         const double* c, Py_ssize_t sc, const double* act, Py_ssize_t sact,
                         double* g_gates, double* g_c, Py_ssize_t rows, Py_ssize_t H,
                         int nt) nogil


cdef struct Operand:
    char* data
    Py_ssize_t row_stride


cdef bint _operand(object x, object dt, Py_ssize_t rows, Py_ssize_t n, Operand* op):
    """x (a TensorImpl or None) as rows of unit stride: None gives a NULL operand; False for
    another dtype or shape, or columns that are not adjacent."""
    if x is None:
        op.data = NULL
        op.row_stride = 0
        return True
    cdef TensorImpl t = <TensorImpl>x
    if t._dtype is not dt or len(t._sizes) != 2 or t._sizes[0] != rows or t._sizes[1] != n:
        return False
    if n > 1 and t._strides[1] != 1:
        return False
    op.row_stride = t._strides[0] if rows > 1 else n
    op.data = <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + \
        t._offset * t._dtype.itemsize
    return True


cdef bint _output(object x, object dt, Py_ssize_t rows, Py_ssize_t n, Operand* op):
    """An output: contiguous, of dtype dt and shape (rows, n) (None: not wanted)."""
    if x is not None and not is_contiguous(<TensorImpl>x):
        return False
    return _operand(x, dt, rows, n, op)


cdef int _kind(object dt):
    """0 float32, 1 float64, -1 anything else."""
    cdef object t = dt.np.type
    return 0 if t is np.float32 else (1 if t is np.float64 else -1)


# Elements (rows x H) from which a cell's rows are split over the threads. 97x51 float64 (the
# LSTM sequence row's cells) on the Intel Xeon, 2 threads against one: forward 38 -> 21 us,
# backward 10.9 -> 7.0 us; at the former 32768 those ran on one thread, and the compiled
# LSTM sequence at 2 threads went 65 -> 55 ms with the split.
PAR_MIN = LSTM_PAR_MIN


cdef inline int _threads(Py_ssize_t rows, Py_ssize_t H):
    return fastreduce.threads_now() if rows > 1 and rows * H >= LSTM_PAR_MIN else 1


def lstm_cell(TensorImpl h_out, TensorImpl c_out, TensorImpl act, TensorImpl igates,
              TensorImpl hgates, TensorImpl c):
    """h_out, c_out (N, H) and act (N, 5H: the four activated gates and tanh(c')) from the
    input and hidden gates (N, 4H) and the cell state c (N, H); False for dtypes and
    layouts it does not take."""
    cdef object dt = c._dtype
    cdef int kind = _kind(dt)
    if kind < 0 or len(c._sizes) != 2:
        return False
    cdef Py_ssize_t rows = c._sizes[0], H = c._sizes[1]
    cdef Operand a, b, cc, ho, co, ac
    if not (_operand(igates, dt, rows, 4 * H, &a) and _operand(hgates, dt, rows, 4 * H, &b)
            and _operand(c, dt, rows, H, &cc) and _output(h_out, dt, rows, H, &ho)
            and _output(c_out, dt, rows, H, &co) and _output(act, dt, rows, 5 * H, &ac)):
        return False
    if rows == 0 or H == 0:
        return True
    cdef int nt = _threads(rows, H)
    with nogil:
        if kind == 0:
            lstm_fwd_float(<float*>a.data, a.row_stride, <float*>b.data, b.row_stride,
                           <float*>cc.data, cc.row_stride, <float*>ho.data, <float*>co.data,
                           <float*>ac.data, rows, H, nt)
        else:
            lstm_fwd_double(<double*>a.data, a.row_stride, <double*>b.data, b.row_stride,
                            <double*>cc.data, cc.row_stride, <double*>ho.data,
                            <double*>co.data, <double*>ac.data, rows, H, nt)
    return True


def lstm_cell_backward(TensorImpl grad_gates, grad_c, grad_h, grad_c_new, TensorImpl c,
                       TensorImpl act):
    """grad_gates (N, 4H), the gradient of the pre-activation gates, and grad_c (N, H, or
    None when not wanted), from the gradients of h' and c' (either may be None: zero) and
    the forward's c and act; False for dtypes and layouts it does not take."""
    cdef object dt = c._dtype
    cdef int kind = _kind(dt)
    if kind < 0 or len(c._sizes) != 2:
        return False
    cdef Py_ssize_t rows = c._sizes[0], H = c._sizes[1]
    cdef Operand gg, gcp, gh, gc, cc, ac
    if not (_output(grad_gates, dt, rows, 4 * H, &gg) and _output(grad_c, dt, rows, H, &gcp)
            and _operand(grad_h, dt, rows, H, &gh) and _operand(grad_c_new, dt, rows, H, &gc)
            and _operand(c, dt, rows, H, &cc) and _operand(act, dt, rows, 5 * H, &ac)):
        return False
    if rows == 0 or H == 0:
        return True
    cdef int nt = _threads(rows, H)
    with nogil:
        if kind == 0:
            lstm_bwd_float(<float*>gh.data, gh.row_stride, <float*>gc.data, gc.row_stride,
                           <float*>cc.data, cc.row_stride, <float*>ac.data, ac.row_stride,
                           <float*>gg.data, <float*>gcp.data, rows, H, nt)
        else:
            lstm_bwd_double(<double*>gh.data, gh.row_stride, <double*>gc.data,
                            gc.row_stride, <double*>cc.data, cc.row_stride, <double*>ac.data,
                            ac.row_stride, <double*>gg.data, <double*>gcp.data, rows, H, nt)
    return True


KERNELS = {"lstm_cell": lstm_cell, "lstm_cell_backward": lstm_cell_backward}
