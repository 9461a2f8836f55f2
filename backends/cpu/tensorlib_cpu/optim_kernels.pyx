# cython: boundscheck=False, wraparound=False, cdivision=True
"""Fused optimizer updates: one pass over each parameter's memory instead of the 4-6 passes
(and temporaries) of the same update written as tensor ops, and one OpenMP region for all
the parameters of a group (the `_multi` kernels take lists of tensors: the threads share
the concatenated index space evenly, whatever the tensor sizes). Registered as composite
kernels; tensorlib.optim uses them when the backend has them, its tensor-op form otherwise.

Each element's arithmetic is the tensor-op form's, in the same order and precision (scalars
rounded to the parameter's dtype; built without -ffast-math or FMA contraction), so the
fused and per-tensor paths agree bitwise and no result depends on where a thread split."""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cython.parallel cimport parallel
from libc.math cimport pow, sqrt, sqrtf
cimport numpy as cnp
cimport openmp

from tensorlib._C.tensor_impl cimport TensorImpl, host_array
from tensorlib_cpu import fastreduce

cnp.import_array()

ctypedef fused real:
    float
    double

# Below this many elements in all one thread does the update (a parallel region costs ~1 us).
cdef enum:
    PARALLEL_MIN = 1 << 15


# ---- the element loops --------------------------------------------------------------------
cdef inline void _sgd_range(real* p, const real* g, real* buf, Py_ssize_t lo, Py_ssize_t hi,
                            real lr, real wd, real momentum, real keep, bint nesterov,
                            bint maximize, bint first) noexcept nogil:
    """SGD on p[lo:hi]: keep = 1 - dampening; buf is unused without momentum."""
    cdef Py_ssize_t i
    cdef real d, b
    if momentum != 0 and not first and not nesterov and not maximize:
        # the usual momentum step as loops without branches, which gcc vectorizes (the
        # general loop's per-element tests kept it scalar: 0.73 ms on an MLP's 535k floats,
        # now ~0.2); the same operations in the same order as the general loop
        if wd == 0:
            for i in range(lo, hi):
                b = buf[i] * momentum + g[i] * keep
                buf[i] = b
                p[i] = p[i] - b * lr
        else:
            for i in range(lo, hi):
                d = g[i] + p[i] * wd
                b = buf[i] * momentum + d * keep
                buf[i] = b
                p[i] = p[i] - b * lr
        return
    for i in range(lo, hi):
        d = -g[i] if maximize else g[i]
        if wd != 0:
            d = d + p[i] * wd
        if momentum != 0:
            if first:
                b = d
            else:
                b = buf[i] * momentum + d * keep
            buf[i] = b
            d = d + b * momentum if nesterov else b
        p[i] = p[i] - d * lr


cdef inline void _adam_range(real* p, const real* g, real* m, real* v, real* vmax,
                             Py_ssize_t lo, Py_ssize_t hi, real one_minus_beta1, real beta2,
                             real one_minus_beta2, real wd, real shrink, real eps,
                             real neg_step_size, real bc2_sqrt, bint amsgrad, bint maximize,
                             bint decoupled) noexcept nogil:
    """Adam/AdamW on p[lo:hi], as tensorlib.optim.adam._adam_update writes it."""
    cdef Py_ssize_t i
    cdef real d, t, s
    if not amsgrad and not maximize and (wd == 0 or decoupled):
        # Adam and AdamW as loops without branches, which gcc vectorizes (the general
        # loop's per-element tests kept it scalar: ~3.4 ms on a Transformer layer's 790k
        # floats); the same operations in the same order as the general loop
        if wd == 0:
            for i in range(lo, hi):
                d = g[i]
                m[i] = m[i] + (d - m[i]) * one_minus_beta1
                v[i] = v[i] * beta2 + d * d * one_minus_beta2
                s = sqrtf(v[i]) if real is float else sqrt(v[i])
                p[i] = p[i] + m[i] / (s / bc2_sqrt + eps) * neg_step_size
        else:
            for i in range(lo, hi):
                d = g[i]
                t = p[i] * shrink
                m[i] = m[i] + (d - m[i]) * one_minus_beta1
                v[i] = v[i] * beta2 + d * d * one_minus_beta2
                s = sqrtf(v[i]) if real is float else sqrt(v[i])
                p[i] = t + m[i] / (s / bc2_sqrt + eps) * neg_step_size
        return
    for i in range(lo, hi):
        d = -g[i] if maximize else g[i]
        if wd != 0:
            if decoupled:
                p[i] = p[i] * shrink
            else:
                d = d + p[i] * wd
        m[i] = m[i] + (d - m[i]) * one_minus_beta1
        t = d * d
        v[i] = v[i] * beta2 + t * one_minus_beta2
        s = v[i]
        if amsgrad:                             # numpy's maximum: a NaN wins; an
            s = s if (s != s or vmax[i] < s) else vmax[i]   # unconditional store vectorizes
            vmax[i] = s
        if real is float:
            s = sqrtf(s)
        else:
            s = sqrt(s)
        t = m[i] / (s / bc2_sqrt + eps)
        p[i] = p[i] + t * neg_step_size


# ---- the tensor lists ---------------------------------------------------------------------
cdef struct _Lists:
    Py_ssize_t count          # tensors
    Py_ssize_t total          # elements in all
    Py_ssize_t* start         # count + 1 prefix sums of the sizes
    void** ptr                # count * width data pointers, list by list
    char* flag                # count per-tensor flags (SGD: first step)
    double* scalar            # count * 3 per-tensor scalars (Adam: step size and bias
                              # correction pairs, then the step counts)


cdef bint _alloc(_Lists* L, Py_ssize_t count, Py_ssize_t width):
    L.count, L.total = count, 0
    L.start = <Py_ssize_t*>PyMem_Malloc((count + 1) * sizeof(Py_ssize_t))
    L.ptr = <void**>PyMem_Malloc(max(1, count * width) * sizeof(void*))
    L.flag = <char*>PyMem_Malloc(max(1, count))
    L.scalar = <double*>PyMem_Malloc(max(1, count * 3) * sizeof(double))
    return L.start != NULL and L.ptr != NULL and L.flag != NULL and L.scalar != NULL


cdef void _free(_Lists* L):
    PyMem_Free(L.start)
    PyMem_Free(L.ptr)
    PyMem_Free(L.flag)
    PyMem_Free(L.scalar)


cdef object _flat_array(object t, object dtype, Py_ssize_t size):
    """The host array of tensor t when it is C-contiguous with `dtype` and `size` elements,
    else None."""
    if t is None or not isinstance(t, TensorImpl):
        return None
    a = host_array(<TensorImpl>t)
    if a.dtype != dtype or not a.flags.c_contiguous or a.size != size:
        return None
    return a


cdef bint _gather(_Lists* L, list lists, object dtype, Py_ssize_t n):
    """Fill L's pointers from `lists` (each n tensors, the first the parameters); False when
    one tensor is not a contiguous host array of `dtype` shaped like its parameter."""
    cdef Py_ssize_t j, w, width = len(lists), size
    cdef cnp.ndarray a
    L.start[0] = 0
    for j in range(n):
        first = host_array(<TensorImpl>lists[0][j])
        size = first.size
        for w in range(width):
            arr = _flat_array(lists[w][j], dtype, size)
            if arr is None:
                return False
            a = arr
            L.ptr[w * n + j] = cnp.PyArray_DATA(a)
        L.start[j + 1] = L.start[j] + size
    L.total = L.start[n]
    return True


cdef object _common_dtype(list params):
    """float32/float64 when every parameter is a host tensor of that one dtype, else None."""
    if not params or not all(isinstance(p, TensorImpl) for p in params):
        return None
    dtype = host_array(<TensorImpl>params[0]).dtype
    if dtype.char not in "fd":
        return None
    return dtype


cdef inline Py_ssize_t _share(Py_ssize_t total, int nt, int t) noexcept nogil:
    """Where thread t's part of the concatenated index space starts, in 16-element
    (cache-line) steps; thread t + 1's start is where it ends. (Returned, not written
    through pointers: Cython makes a parallel block's variables thread-private only when
    the block assigns them.)"""
    cdef Py_ssize_t step = (total + nt - 1) // nt
    step = ((step + 15) // 16) * 16
    return min(total, t * step)


cdef void _sgd_multi(_Lists* L, real lr, real wd, real momentum, real keep, bint nesterov,
                     bint maximize, int nt) noexcept nogil:
    cdef int t
    cdef Py_ssize_t j, lo, hi, a, b, n = L.count
    if L.total < PARALLEL_MIN:
        nt = 1
    with parallel(num_threads=nt):
        t = openmp.omp_get_thread_num()
        lo = _share(L.total, openmp.omp_get_num_threads(), t)
        hi = _share(L.total, openmp.omp_get_num_threads(), t + 1)
        for j in range(n):
            a = max(lo, L.start[j]) - L.start[j]
            b = min(hi, L.start[j + 1]) - L.start[j]
            if a < b:
                _sgd_range(<real*>L.ptr[j], <const real*>L.ptr[n + j], <real*>L.ptr[2 * n + j],
                           a, b, lr, wd, momentum, keep, nesterov, maximize, L.flag[j])


cdef void _adam_multi(_Lists* L, real one_minus_beta1, real beta2, real one_minus_beta2,
                      real wd, real shrink, real eps, bint amsgrad, bint maximize,
                      bint decoupled, int nt) noexcept nogil:
    cdef int t
    cdef Py_ssize_t j, lo, hi, a, b, n = L.count
    cdef real* vmax
    if L.total < PARALLEL_MIN:
        nt = 1
    with parallel(num_threads=nt):
        t = openmp.omp_get_thread_num()
        lo = _share(L.total, openmp.omp_get_num_threads(), t)
        hi = _share(L.total, openmp.omp_get_num_threads(), t + 1)
        for j in range(n):
            a = max(lo, L.start[j]) - L.start[j]
            b = min(hi, L.start[j + 1]) - L.start[j]
            vmax = <real*>L.ptr[4 * n + j] if amsgrad else NULL
            if a < b:
                _adam_range(<real*>L.ptr[j], <const real*>L.ptr[n + j],
                            <real*>L.ptr[2 * n + j], <real*>L.ptr[3 * n + j], vmax, a, b,
                            one_minus_beta1, beta2, one_minus_beta2, wd, shrink, eps,
                            <real>(-L.scalar[2 * j]), <real>L.scalar[2 * j + 1], amsgrad,
                            maximize, decoupled)


cdef void _bump(list tensors):
    for t in tensors:
        if t is not None:
            (<TensorImpl>t)._storage.version += 1


# ---- the kernels --------------------------------------------------------------------------
def sgd_update_multi(list params, list grads, list bufs, double lr, double weight_decay,
                     double momentum, double dampening, bint nesterov, bint maximize,
                     list first):
    """SGD on every (param, grad, momentum buffer) in one pass: param -= lr * direction,
    updating each buffer in place (`bufs` is ignored without momentum); `first[j]` starts
    buffer j from its gradient. Returns False (nothing written) unless every tensor is a
    C-contiguous host array of the parameters' one float32/float64 dtype."""
    cdef Py_ssize_t n = len(params), j
    dtype = _common_dtype(params)
    if dtype is None or len(grads) != n or (momentum != 0 and (len(bufs) != n
                                                               or len(first) != n)):
        return False
    cdef _Lists L
    cdef int nt
    lists = [params, grads, bufs if momentum != 0 else params]
    try:
        if not _alloc(&L, n, 3):
            raise MemoryError("sgd_update_multi: pointer arrays")
        if not _gather(&L, lists, dtype, n):
            return False
        for j in range(n):
            L.flag[j] = bool(first[j]) if momentum != 0 else 0
        nt = <int>fastreduce.threads_now()
        if dtype.char == "f":
            with nogil:
                _sgd_multi[float](&L, <float>lr, <float>weight_decay, <float>momentum,
                                  <float>(1 - dampening), nesterov, maximize, nt)
        else:
            with nogil:
                _sgd_multi[double](&L, lr, weight_decay, momentum, 1 - dampening, nesterov,
                                   maximize, nt)
    finally:
        _free(&L)
    _bump(params)
    if momentum != 0:
        _bump(bufs)
    return True


def sgd_update(TensorImpl param, TensorImpl grad, buf, double lr, double weight_decay,
               double momentum, double dampening, bint nesterov, bint maximize, bint first):
    """param -= lr * (SGD direction), updating `buf` (the momentum buffer) in place; `first`
    starts the buffer from the gradient. Returns False for layouts it does not take."""
    return sgd_update_multi([param], [grad], [buf], lr, weight_decay, momentum, dampening,
                            nesterov, maximize, [first])


cdef bint _step_values(list steps, double* out):
    """Each parameter's step count t read from its 0-dim host `step` tensor (already
    advanced for this step): read here, when the kernel runs, not in Python, so a compiled
    step replays with no graph break (as torch's capturable=True reads `step` on the
    device). False when one is not a one-element float host tensor."""
    cdef Py_ssize_t j
    for j in range(len(steps)):
        s = steps[j]
        if not isinstance(s, TensorImpl) or (<TensorImpl>s)._device.type != "cpu":
            return False
        a = host_array(<TensorImpl>s)
        if a.size != 1 or a.dtype.char not in "fd":
            return False
        out[j] = float(a.reshape(()))
    return True


def adam_update_multi_capturable(list params, list grads, list exp_avgs, list exp_avg_sqs,
                      list max_exp_avg_sqs, list steps, double beta1, double beta2,
                      double weight_decay, double lr, double eps, bint amsgrad, bint maximize,
                      bint decoupled_weight_decay):
    """Adam (AdamW with `decoupled_weight_decay`) on every parameter in one pass, updating
    the moments (and with `amsgrad` the running max) in place; per parameter j, the step
    size lr / (1 - beta1^t) and sqrt(1 - beta2^t) of its own step t (`steps[j]`, its 0-dim
    step tensor), in double as Python computes them for the per-parameter path. (The
    "adam_update_multi" contract of the GPU composites takes those numbers from Python
    instead; this one needs no host read of `step`, as torch's capturable=True.) Returns
    False (nothing written) unless every tensor is a C-contiguous host array of one
    float32/float64 dtype."""
    cdef Py_ssize_t n = len(params), j
    cdef double t
    dtype = _common_dtype(params)
    if dtype is None or not (len(grads) == len(exp_avgs) == len(exp_avg_sqs) == n
                             == len(steps)):
        return False
    if amsgrad and len(max_exp_avg_sqs) != n:
        return False
    cdef _Lists L
    cdef int nt
    lists = [params, grads, exp_avgs, exp_avg_sqs] + ([max_exp_avg_sqs] if amsgrad else [])
    cdef double shrink = 1 - lr * weight_decay
    try:
        if not _alloc(&L, n, 5):
            raise MemoryError("adam_update_multi_capturable: pointer arrays")
        if not _gather(&L, lists, dtype, n) or not _step_values(steps, L.scalar + 2 * n):
            return False
        for j in range(n):
            t = L.scalar[2 * n + j]
            L.scalar[2 * j] = lr / (1 - pow(beta1, t))
            L.scalar[2 * j + 1] = pow(1 - pow(beta2, t), 0.5)
        nt = <int>fastreduce.threads_now()
        if dtype.char == "f":
            with nogil:
                _adam_multi[float](&L, <float>(1 - beta1), <float>beta2, <float>(1 - beta2),
                                   <float>weight_decay, <float>shrink, <float>eps, amsgrad,
                                   maximize, decoupled_weight_decay, nt)
        else:
            with nogil:
                _adam_multi[double](&L, 1 - beta1, beta2, 1 - beta2, weight_decay, shrink, eps,
                                    amsgrad, maximize, decoupled_weight_decay, nt)
    finally:
        _free(&L)
    _bump(params)
    _bump(exp_avgs)
    _bump(exp_avg_sqs)
    if amsgrad:
        _bump(max_exp_avg_sqs)
    return True


KERNELS = {"sgd_update": sgd_update, "sgd_update_multi": sgd_update_multi,
           "adam_update_multi_capturable": adam_update_multi_capturable}
