# cython: boundscheck=False, wraparound=False, cdivision=True
"""cumsum and cumprod along a dim as C loops on the backend's threads, accumulating as
PyTorch's CPU kernel does: float32 in double, rounded to float at each step (numpy's float32
scan stays in float, so its results drifted from PyTorch's by ~1e-3 over 1e5 elements),
float16 and bfloat16 in float (numpy's in half: off by 1 over 3000 elements), float64 in
double, int64 wrapping. Scans along a row run eight rows side by side (eight independent
add chains instead of one latency-bound chain); a scan along an outer dim keeps one
accumulator per inner element and walks the inner dim contiguously. numpy's cumsum of 1M
float32 in rows of 1024 took 7x PyTorch's time. Built without -ffast-math (setup.py): every
element is rounded in scan order."""
import numpy as np

cimport numpy as cnp

from tensorlib._C.dtypes cimport BFLOAT16, FLOAT16, FLOAT32, FLOAT64, INT64
from tensorlib._C.tensor_impl cimport TensorImpl, host_array

from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #include <immintrin.h>
    #define SC_MAXD 64
    #define SC_CHUNK 256       /* inner elements one work unit of a column scan carries */
    #define SC_LANES 8         /* rows a row scan runs side by side */
    #define SC_LINE 16         /* elements of one row a row scan takes at a time */

    typedef struct {
        int nd;                             /* outer dims: all but the scanned and inner */
        Py_ssize_t shape[SC_MAXD], xs[SC_MAXD], os[SC_MAXD];        /* in elements */
        Py_ssize_t n, xn, on;               /* the scanned dim */
        Py_ssize_t m, xm, om;               /* the inner dim (m = 1: none) */
        Py_ssize_t outer;
        const char* x;
        char* out;
    } sc_plan;

    static void sc_offsets(const sc_plan* p, Py_ssize_t r, Py_ssize_t* xo, Py_ssize_t* oo) {
        Py_ssize_t a = 0, b = 0;
        for (int d = p->nd - 1; d >= 0; d--) {
            Py_ssize_t q = r % p->shape[d];
            r /= p->shape[d];
            a += q * p->xs[d];
            b += q * p->os[d];
        }
        *xo = a; *oo = b;
    }

    /* T: element type, A: accumulator type, OP: the step (acc OP= value). Row scans: the
       outer index ranges over rows (m == 1), SC_LANES at a time; column scans: units of
       (outer row, SC_CHUNK inner elements). */
    #define SC_DEFINE(NAME, T, A, OP, INIT, LOAD, STORE)                                    \
    static void NAME(const sc_plan* p, int nt) {                                            \
        const T* x = (const T*)p->x; T* o = (T*)p->out;                                     \
        Py_ssize_t n = p->n, xn = p->xn, on = p->on, u;                                     \
        if (p->m == 1) {                                                                    \
            Py_ssize_t groups = (p->outer + SC_LANES - 1) / SC_LANES;                       \
            _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")         \
            for (u = 0; u < groups; u++) {                                                  \
                Py_ssize_t first = u * SC_LANES, lanes = p->outer - first, xo[SC_LANES],    \
                           oo[SC_LANES];                                                    \
                if (lanes > SC_LANES) lanes = SC_LANES;                                     \
                for (int l = 0; l < lanes; l++) sc_offsets(p, first + l, &xo[l], &oo[l]);  \
                if (lanes == SC_LANES) {                                                    \
                    /* a cache line of each row in turn: the rows' chains overlap in the   \
                       core, and few lines (one cache set apart in power-of-two rows) are  \
                       live at a time */                                                    \
                    A acc[SC_LANES];                                                        \
                    for (int l = 0; l < SC_LANES; l++) acc[l] = INIT;                       \
                    for (Py_ssize_t c = 0; c < n; c += SC_LINE) {                           \
                        Py_ssize_t e = n - c < SC_LINE ? n - c : SC_LINE;                   \
                        for (int l = 0; l < SC_LANES; l++) {                                \
                            const T* xr = x + xo[l] + c * xn; T* orow = o + oo[l] + c * on; \
                            A a = acc[l];                                                   \
                            for (Py_ssize_t i = 0; i < e; i++) {                            \
                                a = a OP LOAD(xr[i * xn]);                                  \
                                orow[i * on] = STORE(a);                                    \
                            }                                                               \
                            acc[l] = a;                                                     \
                        }                                                                   \
                    }                                                                       \
                } else {                                                                    \
                    for (int l = 0; l < lanes; l++) {                                       \
                        A acc = INIT;                                                       \
                        for (Py_ssize_t i = 0; i < n; i++) {                                \
                            acc = acc OP LOAD(x[xo[l] + i * xn]);                           \
                            o[oo[l] + i * on] = STORE(acc);                                 \
                        }                                                                   \
                    }                                                                       \
                }                                                                           \
            }                                                                               \
            return;                                                                         \
        }                                                                                   \
        Py_ssize_t chunks = (p->m + SC_CHUNK - 1) / SC_CHUNK;                               \
        _Pragma("omp parallel for num_threads(nt) if (nt > 1) schedule(static)")             \
        for (u = 0; u < p->outer * chunks; u++) {                                           \
            Py_ssize_t xo, oo, lo = u % chunks * SC_CHUNK, xm = p->xm, om = p->om;          \
            Py_ssize_t w = p->m - lo < SC_CHUNK ? p->m - lo : SC_CHUNK;                     \
            A acc[SC_CHUNK];                                                                \
            sc_offsets(p, u / chunks, &xo, &oo);                                            \
            xo += lo * xm; oo += lo * om;                                                   \
            for (Py_ssize_t j = 0; j < w; j++) acc[j] = INIT;                               \
            for (Py_ssize_t i = 0; i < n; i++) {                                            \
                const T* xr = x + xo + i * xn; T* orow = o + oo + i * on;                   \
                for (Py_ssize_t j = 0; j < w; j++) {                                        \
                    acc[j] = acc[j] OP LOAD(xr[j * xm]);                                    \
                    orow[j * om] = STORE(acc[j]);                                           \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
    #define SC_TO_DOUBLE(v) ((double)(v))
    #define SC_TO_U64(v) ((uint64_t)(v))
    #define SC_TO_FLOAT(a) ((float)(a))
    #define SC_TO_DOUBLE_OUT(a) (a)
    #define SC_TO_I64(a) ((int64_t)(a))
    SC_DEFINE(sc_cumsum_f32, float, double, +, 0.0, SC_TO_DOUBLE, SC_TO_FLOAT)
    SC_DEFINE(sc_cumsum_f64, double, double, +, 0.0, SC_TO_DOUBLE, SC_TO_DOUBLE_OUT)
    SC_DEFINE(sc_cumsum_i64, int64_t, uint64_t, +, 0, SC_TO_U64, SC_TO_I64)
    SC_DEFINE(sc_cumprod_f32, float, double, *, 1.0, SC_TO_DOUBLE, SC_TO_FLOAT)
    SC_DEFINE(sc_cumprod_f64, double, double, *, 1.0, SC_TO_DOUBLE, SC_TO_DOUBLE_OUT)
    SC_DEFINE(sc_cumprod_i64, int64_t, uint64_t, *, 1, SC_TO_U64, SC_TO_I64)
    /* bfloat16 in float, rounded back to nearest even as c10::BFloat16 (NaN as 0x7FC0) */
    static inline float sc_bf16_load(uint16_t b) {
        uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f;
    }
    static inline uint16_t sc_bf16_store(float f) {
        uint32_t u; memcpy(&u, &f, 4);
        if (f != f) return 0x7FC0;
        return (uint16_t)((u + ((u >> 16) & 1) + 0x7FFFu) >> 16);
    }
    SC_DEFINE(sc_cumsum_bf16, uint16_t, float, +, 0.0f, sc_bf16_load, sc_bf16_store)
    SC_DEFINE(sc_cumprod_bf16, uint16_t, float, *, 1.0f, sc_bf16_load, sc_bf16_store)
    /* float16 in float by the F16C conversions (round to nearest even) */
    #if defined(__F16C__)
    #define SC_HAVE_F16C 1
    #define SC_F16_LOAD(h) _cvtsh_ss(h)
    #define SC_F16_STORE(a) ((uint16_t)_cvtss_sh((a), _MM_FROUND_TO_NEAREST_INT))
    SC_DEFINE(sc_cumsum_f16, uint16_t, float, +, 0.0f, SC_F16_LOAD, SC_F16_STORE)
    SC_DEFINE(sc_cumprod_f16, uint16_t, float, *, 1.0f, SC_F16_LOAD, SC_F16_STORE)
    #else
    #define SC_HAVE_F16C 0
    static void sc_cumsum_f16(const sc_plan* p, int nt) {}
    static void sc_cumprod_f16(const sc_plan* p, int nt) {}
    #endif
    """
    ctypedef struct sc_plan:
        int nd
        Py_ssize_t shape[64]
        Py_ssize_t xs[64]
        Py_ssize_t os[64]
        Py_ssize_t n, xn, on, m, xm, om, outer
        const char* x
        char* out
    void sc_cumsum_f32(const sc_plan* p, int nt) nogil
    void sc_cumsum_f64(const sc_plan* p, int nt) nogil
    void sc_cumsum_i64(const sc_plan* p, int nt) nogil
    void sc_cumprod_f32(const sc_plan* p, int nt) nogil
    void sc_cumprod_f64(const sc_plan* p, int nt) nogil
    void sc_cumprod_i64(const sc_plan* p, int nt) nogil
    void sc_cumsum_bf16(const sc_plan* p, int nt) nogil
    void sc_cumprod_bf16(const sc_plan* p, int nt) nogil
    void sc_cumsum_f16(const sc_plan* p, int nt) nogil
    void sc_cumprod_f16(const sc_plan* p, int nt) nogil
    int SC_HAVE_F16C

ctypedef void (*scan_fn)(const sc_plan* p, int nt) noexcept nogil

DEF MAXD = 64
cdef Py_ssize_t PARALLEL_MIN = 1 << 16      # elements: below, one thread scans


cdef inline char* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + \
        t._offset * t._dtype.itemsize


cdef bint _plan(sc_plan* p, TensorImpl out, TensorImpl x, int dim):
    """The plan of a scan along dim; the inner dim is the one out steps through by one
    element (when it is not dim). False for another memory or too many dims."""
    cdef int nd = len(x._sizes), d, o = 0, inner = -1
    if (nd == 0 or nd > MAXD or x._sizes != out._sizes
            or type(x._storage.handle) is not np.ndarray
            or type(out._storage.handle) is not np.ndarray):
        return False
    for d in range(nd):
        if d != dim and out._strides[d] == 1 and x._sizes[d] > 1:
            inner = d
    p.n, p.xn, p.on = x._sizes[dim], x._strides[dim], out._strides[dim]
    p.m, p.xm, p.om = 1, 0, 0
    if inner >= 0 and out._strides[dim] != 1:
        p.m, p.xm, p.om = x._sizes[inner], x._strides[inner], out._strides[inner]
    else:
        inner = -1
    p.outer = 1
    for d in range(nd):
        if d == dim or d == inner:
            continue
        p.shape[o], p.xs[o], p.os[o] = x._sizes[d], x._strides[d], out._strides[d]
        p.outer *= x._sizes[d]
        o += 1
    p.nd = o
    p.x, p.out = _data(x), _data(out)
    return True


cdef bint _scan(TensorImpl out, TensorImpl x, int dim, bint product, bint reverse):
    """The C scan (from the last element along dim when `reverse`); False if not taken."""
    cdef sc_plan p
    cdef scan_fn f
    cdef int code = x._dtype.code
    if out._dtype is not x._dtype:
        return False
    if code == FLOAT32:
        f = sc_cumprod_f32 if product else sc_cumsum_f32
    elif code == FLOAT64:
        f = sc_cumprod_f64 if product else sc_cumsum_f64
    elif code == INT64:
        f = sc_cumprod_i64 if product else sc_cumsum_i64
    elif code == BFLOAT16:
        f = sc_cumprod_bf16 if product else sc_cumsum_bf16
    elif code == FLOAT16 and SC_HAVE_F16C:
        f = sc_cumprod_f16 if product else sc_cumsum_f16
    else:
        return False
    if not _plan(&p, out, x, dim):
        return False
    if reverse and p.n:                     # walk dim backwards: start at its last element
        p.x += (p.n - 1) * p.xn * x._dtype.itemsize
        p.out += (p.n - 1) * p.on * x._dtype.itemsize
        p.xn, p.on = -p.xn, -p.on
    cdef int nt = fastreduce.threads_now() if p.n * p.m * p.outer >= PARALLEL_MIN else 1
    with nogil:
        f(&p, nt)
    return True


def cumsum(TensorImpl out, TensorImpl x, int dim):
    """out = running sums of x along dim (out's dtype; x already converted to it)."""
    if not _scan(out, x, dim, False, False):
        np.cumsum(host_array(x), axis=dim, out=host_array(out))


def cumprod(TensorImpl out, TensorImpl x, int dim):
    """out = running products of x along dim."""
    if not _scan(out, x, dim, True, False):
        np.cumprod(host_array(x), axis=dim, out=host_array(out))


def reverse_cumsum(TensorImpl out, TensorImpl x, int dim):
    """out = running sums of x along dim from its end (cumsum's gradient), added in PyTorch's
    order: from the last element. False if not taken."""
    return _scan(out, x, dim, False, True)


KERNELS = {"cumsum": cumsum, "cumprod": cumprod, "reverse_cumsum": reverse_cumsum}
