# cython: boundscheck=False, wraparound=False
"""Fused 2-D max pooling: each output scans its window once (values and argmax together),
planes split across OpenMP threads. The decomposition materialises every window (9x the
input for 3x3) and then runs argmax and two gathers."""
import numpy as np
cimport numpy as cnp
from cython.parallel cimport prange

from tensorlib._C.tensor_impl cimport TensorImpl, host_array

cnp.import_array()

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* NaN tests on the bits: -ffast-math folds x != x away */
    static inline int is_nan_f(float v) { uint32_t u; memcpy(&u, &v, 4);
        return (u & 0x7fffffffu) > 0x7f800000u; }
    static inline int is_nan_d(double v) { uint64_t u; memcpy(&u, &v, 8);
        return (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }
    """
    bint is_nan_f(float v) nogil
    bint is_nan_d(double v) nogil

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
                      Py_ssize_t k1, Py_ssize_t s0, Py_ssize_t s1) noexcept nogil:
    """The common case (no padding, no dilation): window positions computed, not looked up."""
    cdef Py_ssize_t pl, i, j, a, b, flat, best_i, row
    cdef real v, best
    cdef const real* plane
    for pl in prange(planes, schedule="static"):
        plane = x + pl * h * w
        for i in range(o0):
            for j in range(o1):
                best_i = i * s0 * w + j * s1
                best = plane[best_i]
                for a in range(k0):
                    row = (i * s0 + a) * w + j * s1
                    for b in range(k1):
                        flat = row + b
                        v = plane[flat]
                        if v > best or (_nan(v) and not _nan(best)):
                            best = v
                            best_i = flat
                out[(pl * o0 + i) * o1 + j] = best
                idx[(pl * o0 + i) * o1 + j] = best_i


cdef void _pool(const real* x, real* out, long long* idx, Py_ssize_t planes, Py_ssize_t h,
                Py_ssize_t w, const long long* p0, const unsigned char* ok0, Py_ssize_t o0,
                Py_ssize_t k0, const long long* p1, const unsigned char* ok1, Py_ssize_t o1,
                Py_ssize_t k1) noexcept nogil:
    cdef Py_ssize_t pl, i, j, a, b, flat, best_i, first
    cdef real v, best
    cdef const real* plane
    for pl in prange(planes, schedule="static"):
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
                        if best_i < 0 or v > best or (_nan(v) and not _nan(best)):
                            best = v
                            best_i = flat
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
    """values/indices (N, C, O0, O1) from x (N, C, H, W) with per-dim (positions, valid)
    tables; False (nothing written) for other ranks, dtypes or layouts."""
    if len(tables) != 2:
        return False
    cdef cnp.ndarray xv = host_array(x), ov = host_array(values), iv = host_array(indices)
    if xv.dtype not in (np.float32, np.float64) or not (xv.flags.c_contiguous and
                                                       ov.flags.c_contiguous and
                                                       iv.flags.c_contiguous):
        return False
    cdef cnp.ndarray p0 = np.ascontiguousarray(tables[0][0], dtype=np.int64)
    cdef cnp.ndarray p1 = np.ascontiguousarray(tables[1][0], dtype=np.int64)
    cdef cnp.ndarray ok0 = np.ascontiguousarray(tables[0][1], dtype=np.uint8)
    cdef cnp.ndarray ok1 = np.ascontiguousarray(tables[1][1], dtype=np.uint8)
    cdef Py_ssize_t planes = xv.shape[0] * xv.shape[1], h = xv.shape[2], w = xv.shape[3]
    cdef Py_ssize_t o0 = p0.shape[0], k0 = p0.shape[1], o1 = p1.shape[0], k1 = p1.shape[1]
    cdef long long* ip = <long long*>cnp.PyArray_DATA(iv)
    cdef const long long* q0 = <long long*>cnp.PyArray_DATA(p0)
    cdef const long long* q1 = <long long*>cnp.PyArray_DATA(p1)
    cdef const unsigned char* v0 = <unsigned char*>cnp.PyArray_DATA(ok0)
    cdef const unsigned char* v1 = <unsigned char*>cnp.PyArray_DATA(ok1)
    cdef void* xd = cnp.PyArray_DATA(xv)
    cdef void* od = cnp.PyArray_DATA(ov)
    cdef Py_ssize_t s0, s1
    if _dense(p0, ok0) and _dense(p1, ok1):
        s0 = p0[1, 0] - p0[0, 0] if o0 > 1 else 1
        s1 = p1[1, 0] - p1[0, 0] if o1 > 1 else 1
        if xv.dtype == np.float32:
            with nogil:
                _pool_dense[float](<float*>xd, <float*>od, ip, planes, h, w, o0, o1, k0, k1,
                                   s0, s1)
        else:
            with nogil:
                _pool_dense[double](<double*>xd, <double*>od, ip, planes, h, w, o0, o1, k0,
                                    k1, s0, s1)
        return True
    if xv.dtype == np.float32:
        with nogil:
            _pool[float](<float*>xd, <float*>od, ip, planes, h, w, q0, v0, o0, k0, q1, v1,
                         o1, k1)
    else:
        with nogil:
            _pool[double](<double*>xd, <double*>od, ip, planes, h, w, q0, v0, o0, k0, q1, v1,
                          o1, k1)
    return True


KERNELS = {"max_pool": max_pool}
