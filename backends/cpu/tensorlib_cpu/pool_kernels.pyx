# cython: boundscheck=False, wraparound=False
"""Fused 2-D max pooling: each output scans its window once (values and argmax together),
planes split across OpenMP threads. The decomposition materialises every window (9x the
input for 3x3) and then runs argmax and two gathers."""
import numpy as np
cimport numpy as cnp
cimport openmp
from cython.parallel cimport prange

from tensorlib._C.tensor_impl cimport TensorImpl, host_array

from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* built without -ffast-math (setup.py), so x != x is a NaN test the compiler vectorises */
    static inline int is_nan_f(float v) { return v != v; }
    static inline int is_nan_d(double v) { return v != v; }

    /* One output row of a dense max pool: window element by window element, each a pass
       over the row's o1 outputs. Independent outputs in the inner loop (no dependency chain
       through `best`, and no branch: masks select) let it vectorise; one window at a time with
       a branch ran 6x slower on random data. A NaN wins and stays (PyTorch propagates it);
       ties keep the first maximum in window order. */
    #define TL_DENSE_ROW(NAME, T, U, ISNAN)                                                  \
    static inline void NAME(const T* plane, int64_t start, int64_t w, int64_t o1,            \
                            int64_t s1, int64_t k0, int64_t k1, T* out, long long* idx) {    \
        int64_t a, b, j;                                                                     \
        for (j = 0; j < o1; j++) { out[j] = plane[start + j * s1]; idx[j] = start + j * s1; }\
        for (a = 0; a < k0; a++) {                                                           \
            for (b = 0; b < k1; b++) {                                                       \
                int64_t off = start + a * w + b;                                             \
                for (j = 0; j < o1; j++) {                                                   \
                    T v = plane[off + j * s1], best = out[j];                                \
                    U vb, bb;                                                                \
                    memcpy(&vb, &v, sizeof(T)); memcpy(&bb, &best, sizeof(T));               \
                    U take = (U)((v > best) | (ISNAN(v) & !ISNAN(best)));                   \
                    U m = (U)0 - take;                                                       \
                    bb = (vb & m) | (bb & ~m);                                               \
                    memcpy(&out[j], &bb, sizeof(T));                                         \
                    uint64_t mi = (uint64_t)0 - (uint64_t)take;                              \
                    idx[j] = (long long)(((uint64_t)(off + j * s1) & mi) |                   \
                                         ((uint64_t)idx[j] & ~mi));                          \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }
    TL_DENSE_ROW(dense_row_f, float, uint32_t, is_nan_f)
    TL_DENSE_ROW(dense_row_d, double, uint64_t, is_nan_d)

    /* A whole plane of the 2x2, stride-2 window (most CNNs), as two flat passes the compiler
       vectorises (rows of 13 outputs are too short for per-row vectors): the maximum of each
       horizontal pair over the plane's first 2*o0 rows, then each pair against the one a row
       below, computed for every pair ("wide": rows that are bottoms of a window are computed
       and dropped), then the kept rows copied out. An odd width (floor mode drops the last
       column) is first copied to an even-width scratch, its indices mapped back on the way
       out. Window order is kept: the later element wins only if strictly larger or the
       first NaN. */
    static inline int64_t pool2_scratch_bytes(int64_t w, int64_t o0, int64_t item) {
        int64_t o1 = w / 2, pairs = 2 * o0 * o1, span = (2 * o0 - 1) * o1;
        return span * 8 + (pairs + span + (w % 2 ? 2 * pairs : 0)) * item + pairs * 4;
    }
    #define TL_POOL2_PLANE(NAME, T)                                                          \
    static inline void NAME(const T* x, int64_t w, int64_t o0, T* out, long long* idx,       \
                            char* scratch) {                                                 \
        int64_t o1 = w / 2, we = 2 * o1, pairs = 2 * o0 * o1, span = (2 * o0 - 1) * o1;      \
        long long* wk = (long long*)scratch;         /* pool2_scratch_bytes(w, o0, T) */     \
        T* pm = (T*)(wk + span);                                                             \
        T* wv = pm + pairs;                                                                  \
        int32_t* pk = (int32_t*)(wv + span + (w != we ? 2 * pairs : 0));                     \
        const T* src = x;                                                                    \
        if (w != we) {                                                                       \
            T* even = wv + span;                                                             \
            for (int64_t r = 0; r < 2 * o0; r++)                                             \
                memcpy(even + r * we, x + r * w, sizeof(T) * we);                            \
            src = even;                                                                      \
        }                                                                                    \
        for (int64_t k = 0; k < pairs; k++) {                                                \
            T a = src[2 * k], b = src[2 * k + 1];                                            \
            int32_t t = (b > a) | ((b != b) & (a == a));                                     \
            pm[k] = t ? b : a; pk[k] = t;                                                    \
        }                                                                                    \
        for (int64_t p = 0; p < span; p++) {                                                 \
            T top = pm[p], bottom = pm[p + o1];                                              \
            int t = (bottom > top) | ((bottom != bottom) & (top == top));                    \
            wv[p] = t ? bottom : top;                                                        \
            wk[p] = 2 * p + (t ? we + pk[p + o1] : pk[p]);                                   \
        }                                                                                    \
        for (int64_t i = 0; i < o0; i++) {                                                   \
            memcpy(out + i * o1, wv + 2 * i * o1, sizeof(T) * o1);                           \
            if (w == we) {                                                                   \
                memcpy(idx + i * o1, wk + 2 * i * o1, sizeof(long long) * o1);               \
            } else {              /* row y of the scratch starts y elements early in x */    \
                for (int64_t j = 0; j < o1; j++) {                                           \
                    long long v = wk[2 * i * o1 + j];                                        \
                    idx[i * o1 + j] = v + 2 * i + (v >= (2 * i + 1) * we);                   \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }
    TL_POOL2_PLANE(pool2_plane_f, float)
    TL_POOL2_PLANE(pool2_plane_d, double)
    """
    bint is_nan_f(float v) nogil
    bint is_nan_d(double v) nogil
    long long pool2_scratch_bytes(long long w, long long o0, long long item) nogil
    void pool2_plane_f(const float* x, long long w, long long o0, float* out,
                       long long* idx, char* scratch) nogil
    void pool2_plane_d(const double* x, long long w, long long o0, double* out,
                       long long* idx, char* scratch) nogil
    void dense_row_f(const float* plane, long long start, long long w, long long o1,
                     long long s1, long long k0, long long k1, float* out,
                     long long* idx) nogil
    void dense_row_d(const double* plane, long long start, long long w, long long o1,
                     long long s1, long long k0, long long k1, double* out,
                     long long* idx) nogil

ctypedef fused real:
    float
    double


cdef inline bint _nan(real v) noexcept nogil:
    if real is float:
        return is_nan_f(v)
    else:
        return is_nan_d(v)


cdef void _pool_dense(const real* x, real* out, long long* idx, Py_ssize_t planes,
                      Py_ssize_t h, Py_ssize_t w, Py_ssize_t o0, Py_ssize_t o1, Py_ssize_t k0,
                      Py_ssize_t k1, Py_ssize_t s0, Py_ssize_t s1, char* scratch,
                      Py_ssize_t scratch_bytes, int nt) noexcept nogil:
    """The common case (no padding, no dilation): window positions computed, not looked up.
    With scratch (one block of scratch_bytes per thread), the 2x2 stride-2 plane path."""
    cdef Py_ssize_t pl, i, o
    cdef char* mine
    if scratch != NULL:
        for pl in prange(planes, schedule="static", num_threads=nt):
            mine = scratch + openmp.omp_get_thread_num() * scratch_bytes
            if real is float:
                pool2_plane_f(x + pl * h * w, w, o0, out + pl * o0 * o1, idx + pl * o0 * o1,
                              mine)
            else:
                pool2_plane_d(x + pl * h * w, w, o0, out + pl * o0 * o1, idx + pl * o0 * o1,
                              mine)
        return
    for pl in prange(planes, schedule="static", num_threads=nt):
        for i in range(o0):
            o = (pl * o0 + i) * o1
            if real is float:
                dense_row_f(x + pl * h * w, i * s0 * w, w, o1, s1, k0, k1, out + o, idx + o)
            else:
                dense_row_d(x + pl * h * w, i * s0 * w, w, o1, s1, k0, k1, out + o, idx + o)


cdef void _pool(const real* x, real* out, long long* idx, Py_ssize_t planes, Py_ssize_t h,
                Py_ssize_t w, const long long* p0, const unsigned char* ok0, Py_ssize_t o0,
                Py_ssize_t k0, const long long* p1, const unsigned char* ok1, Py_ssize_t o1,
                Py_ssize_t k1, int nt) noexcept nogil:
    cdef Py_ssize_t pl, i, j, a, b, flat, best_i
    cdef real v, best
    cdef bint take
    cdef const real* plane
    for pl in prange(planes, schedule="static", num_threads=nt):
        plane = x + pl * h * w
        for i in range(o0):
            for j in range(o1):
                best_i = -1
                best = 0
                for a in range(k0):
                    if not ok0[i * k0 + a]:
                        continue
                    for b in range(k1):
                        if not ok1[j * k1 + b]:
                            continue
                        flat = p0[i * k0 + a] * w + p1[j * k1 + b]
                        v = plane[flat]
                        take = (best_i < 0) | (v > best) | (_nan(v) & (not _nan(best)))
                        best = v if take else best
                        best_i = flat if take else best_i
                out[(pl * o0 + i) * o1 + j] = best
                idx[(pl * o0 + i) * o1 + j] = best_i


cdef bint _dense(cnp.ndarray pos, cnp.ndarray ok):
    """Every window position valid, consecutive (dilation 1) and evenly strided."""
    if not ok.all() or pos.shape[0] == 0:
        return False
    expected = pos[:, :1] + np.arange(pos.shape[1])[None, :]
    if not np.array_equal(pos, expected):
        return False
    starts = pos[:, 0]
    return pos.shape[0] < 2 or bool(np.all(np.diff(starts) == starts[1] - starts[0]))


def max_pool(TensorImpl values, TensorImpl indices, TensorImpl x, tables):
    """values/indices (N, C, O0, O1) from x (N, C, H, W) with one (O, k) int64 positions
    tensor per dim (-1: not in the window); False (nothing written) for other ranks, dtypes
    or layouts."""
    if len(tables) != 2:
        return False
    cdef cnp.ndarray xv = host_array(x), ov = host_array(values), iv = host_array(indices)
    if xv.dtype not in (np.float32, np.float64) or not (xv.flags.c_contiguous and
                                                       ov.flags.c_contiguous and
                                                       iv.flags.c_contiguous):
        return False
    cdef cnp.ndarray p0 = np.ascontiguousarray(host_array(<TensorImpl?>tables[0]),
                                               dtype=np.int64)
    cdef cnp.ndarray p1 = np.ascontiguousarray(host_array(<TensorImpl?>tables[1]),
                                               dtype=np.int64)
    cdef cnp.ndarray ok0 = (p0 >= 0).view(np.uint8)
    cdef cnp.ndarray ok1 = (p1 >= 0).view(np.uint8)
    cdef Py_ssize_t planes = xv.shape[0] * xv.shape[1], h = xv.shape[2], w = xv.shape[3]
    cdef Py_ssize_t o0 = p0.shape[0], k0 = p0.shape[1], o1 = p1.shape[0], k1 = p1.shape[1]
    cdef long long* ip = <long long*>cnp.PyArray_DATA(iv)
    cdef const long long* q0 = <long long*>cnp.PyArray_DATA(p0)
    cdef const long long* q1 = <long long*>cnp.PyArray_DATA(p1)
    cdef const unsigned char* v0 = <unsigned char*>cnp.PyArray_DATA(ok0)
    cdef const unsigned char* v1 = <unsigned char*>cnp.PyArray_DATA(ok1)
    cdef void* xd = cnp.PyArray_DATA(xv)
    cdef void* od = cnp.PyArray_DATA(ov)
    cdef Py_ssize_t s0, s1, per_thread = 0
    cdef int nt = fastreduce.threads_now()
    cdef char* sp = NULL
    cdef cnp.ndarray scratch
    if _dense(p0, ok0) and _dense(p1, ok1):
        s0 = p0[1, 0] - p0[0, 0] if o0 > 1 else 1
        s1 = p1[1, 0] - p1[0, 0] if o1 > 1 else 1
        if k0 == 2 and k1 == 2 and s0 == 2 and s1 == 2 and o1 == w // 2 and o0 > 0 and o1 > 0:
            per_thread = pool2_scratch_bytes(w, o0, xv.itemsize)
            scratch = np.empty(nt * per_thread, np.uint8)          # the 2x2 plane path's
            sp = <char*>cnp.PyArray_DATA(scratch)
        if xv.dtype == np.float32:
            with nogil:
                _pool_dense[float](<float*>xd, <float*>od, ip, planes, h, w, o0, o1, k0, k1,
                                   s0, s1, sp, per_thread, nt)
        else:
            with nogil:
                _pool_dense[double](<double*>xd, <double*>od, ip, planes, h, w, o0, o1, k0,
                                    k1, s0, s1, sp, per_thread, nt)
        return True
    if xv.dtype == np.float32:
        with nogil:
            _pool[float](<float*>xd, <float*>od, ip, planes, h, w, q0, v0, o0, k0, q1, v1,
                         o1, k1, nt)
    else:
        with nogil:
            _pool[double](<double*>xd, <double*>od, ip, planes, h, w, q0, v0, o0, k0, q1, v1,
                          o1, k1, nt)
    return True


cdef void _scatter_planes(real* gx, const real* g, const long long* idx, Py_ssize_t planes,
                          Py_ssize_t plane, Py_ssize_t outs, int nt) noexcept nogil:
    cdef Py_ssize_t pl, o, i
    cdef real* dst
    for pl in prange(planes, schedule="static", num_threads=nt):
        dst = gx + pl * plane
        for i in range(plane):
            dst[i] = 0
        for o in range(outs):
            dst[idx[pl * outs + o]] += g[pl * outs + o]


def max_pool_backward(TensorImpl gx, TensorImpl g, TensorImpl indices, tables):
    """gx (N, C, *S) = zeros with g (N, C, *O) added at its flat per-plane indices (any rank),
    planes split across threads (no two threads touch one plane); False (nothing written)
    for other dtypes or layouts. The per-dim window covers (`tables`) are not needed by this
    scatter form."""
    cdef cnp.ndarray gxv = host_array(gx), gv = host_array(g), iv = host_array(indices)
    if (gv.dtype not in (np.float32, np.float64) or gxv.dtype != gv.dtype
            or iv.dtype != np.int64 or gxv.ndim < 2
            or not (gxv.flags.c_contiguous and gv.flags.c_contiguous and iv.flags.c_contiguous)):
        return False
    cdef Py_ssize_t planes = gxv.shape[0] * gxv.shape[1]
    cdef Py_ssize_t plane = gxv.size // planes if planes else 0
    cdef Py_ssize_t outs = gv.size // planes if planes else 0
    cdef void* dst = cnp.PyArray_DATA(gxv)
    cdef void* src = cnp.PyArray_DATA(gv)
    cdef const long long* ip = <long long*>cnp.PyArray_DATA(iv)
    cdef int nt = fastreduce.threads_now()
    if gv.dtype == np.float32:
        with nogil:
            _scatter_planes[float](<float*>dst, <float*>src, ip, planes, plane, outs, nt)
    else:
        with nogil:
            _scatter_planes[double](<double*>dst, <double*>src, ip, planes, plane, outs, nt)
    return True


KERNELS = {"max_pool": max_pool, "max_pool_backward": max_pool_backward}
