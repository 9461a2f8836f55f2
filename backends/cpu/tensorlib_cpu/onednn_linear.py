"""A float32 Linear layer's forward, out = x @ w + bias (and optionally relu of it), on
oneDNN's matmul primitive with the bias (and relu) applied as each block of the output is
written (its AVX-512 brgemm kernels).

gemm_bias (gemm.pyx) copies the bias into every row of the output first and then runs
dnnl_sgemm with beta = 1, which reads the output back: one more pass over it. The primitive
does neither. One thread, CPU time, the two interleaved 30 times in one process (Xeon
Emerald Rapids, docs/performance.md), best per call: 1024x256x256 907 -> 824 us,
1024x256x1024 3667 -> 3497, 1024x1024x256 3470 -> 3324, 1024x256x768 2600 -> 2576,
128x784x512 673 -> 652, 128x512x256 227 -> 210 (w the transpose of a Linear's weight in
each). Without a bias the primitive was not faster than dnnl_sgemm, so plain products stay
there. relu as a post-op saved the separate pass over the output: relu(linear(x)) at
1024x256x1024, one thread, 4429 -> 3840 us (a Transformer's feed-forward in inference).

Where float32 products run on OpenBLAS on a CPU without AVX-512 (AMD EPYC Zen 3) the
primitive still takes Linear layers of up to AVX2_MAX_ROWS rows: 2 threads, best of 15,
OpenBLAS's gemm_bias against the primitive, 128x784x512 867-873 -> 706-865 us, 128x512x256
281-286 -> 239-271 (mlp_fwd 1082 -> 904 us in `ab`, PyTorch 1164), where 1024 rows lost
(1024x256x768 2853-3049 -> 3497-3575, 1024x1024x256 3933-4052 -> 4064-4299).

One plan (primitive and executor) per shape, strides and thread count is cached: the
primitive is made for the OpenMP team it will run on."""
import ctypes

import numpy as np

from tensorlib_cpu import blas_choice, gemm, onednn
from tensorlib_cpu.onednn import Memory, OneDNNError, Primitive
from tensorlib_cpu.onednn_exec import Executor

__all__ = ["AVX2_MAX_ROWS", "CACHE_SIZE", "MIN_MACS", "linear", "takes_rows"]

CACHE_SIZE = 64
# Smaller products stay on gemm_bias: a new shape costs a primitive (JIT, ~ms), and the
# executor's ~5 us per call is a share worth having only above this size.
MIN_MACS = 1 << 20
# brgemm and the JIT GEMM implementations; any other (a reference loop for strides the
# fast kernels do not take) is declined
_FAST_IMPLS = ("brg", "gemm:jit")
_plans = onednn.PlanCache(CACHE_SIZE)
AVX2_MAX_ROWS = 512
_AVX512 = "avx512f" in blas_choice.cpu_flags()


def takes_rows(m):
    """Whether a float32 Linear of m rows runs on the primitive with the BLAS in use: all
    where float32 products run on oneDNN; up to AVX2_MAX_ROWS on OpenBLAS without AVX-512."""
    if gemm.LIBRARY == "onednn":
        return True
    return gemm.LIBRARY == "openblas" and not _AVX512 and m <= AVX2_MAX_ROWS


class _Plan:
    """The matmul primitive for out (m, n) = x (m, k) @ w (k, n) + bias (1, n), relu of it
    when `relu`, each at the element strides it was made for."""

    def __init__(self, lib, shapes, strides, relu, threads):
        self.lib, self.threads = lib, threads
        memories = [Memory.strided(lib, shape, stride) for shape, stride in zip(shapes, strides)]
        x, w, bias, out = memories
        pd = ctypes.c_void_p()
        attr = _relu_attr(lib) if relu else None
        try:
            lib.call("matmul_primitive_desc_create", ctypes.byref(pd), lib.engine, x.md, w.md,
                     bias.md, out.md, attr)
        finally:
            if attr is not None:
                lib.primitive_attr_destroy(attr)
        users = [(onednn.ARG_SRC, x), (onednn.ARG_WEIGHTS, w), (onednn.ARG_BIAS, bias),
                 (onednn.ARG_DST, out)]
        self.primitive = Primitive(lib, pd, users)
        self.fast = self.primitive.impl.startswith(_FAST_IMPLS)
        self._executor = Executor(lib.run_functions, lib.stream.value,
                                  [m.handle.value for m in memories], [],
                                  [self.primitive.step()], (memories, self.primitive))

    def run(self, x, w, bias, out):
        with self.lib.lock:
            self._executor.run((x, w, bias, out), None, self.threads)


def _relu_attr(lib):
    """Primitive attributes with one post-op: relu (the caller destroys them)."""
    attr, post_ops = ctypes.c_void_p(), ctypes.c_void_p()
    lib.call("primitive_attr_create", ctypes.byref(attr))
    try:
        lib.call("post_ops_create", ctypes.byref(post_ops))
        try:
            lib.call("post_ops_append_eltwise", post_ops, onednn.ELTWISE_RELU, 0.0, 0.0)
            lib.call("primitive_attr_set_post_ops", attr, post_ops)
        finally:
            lib.post_ops_destroy(post_ops)
    except OneDNNError:
        lib.primitive_attr_destroy(attr)
        raise
    return attr


def _strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def _plan(lib, x, w, out, relu, threads):
    m, k = x.shape
    n = w.shape[1]
    key = (m, k, n, _strides(x), _strides(w), _strides(out), relu, threads)

    def build():
        found = _Plan(lib, ((m, k), (k, n), (1, n), (m, n)),
                      (key[3], key[4], (n, 1), key[5]), relu, threads)
        return found if found.fast else None
    return _plans.plan(key, build, threads)


def _strided_ok(a):
    """Positive strides in whole elements with one of the two unit (rows or columns)."""
    item = a.itemsize
    return (all(s > 0 and s % item == 0 for s in a.strides)
            and (a.strides[1] == item or a.strides[0] == item))


def linear(x, w, bias, out, relu=False):
    """out = x @ w + bias (relu of it when `relu`) for float32 host arrays x (m, k),
    w (k, n), bias (n,) with a unit stride and out (m, n), C-contiguous; returns False,
    writing nothing, where the primitive does not take these rows (takes_rows), the product
    is small or empty, or oneDNN declines the layout."""
    if x.dtype != np.float32 or w.dtype != np.float32 or bias.dtype != np.float32 \
            or out.dtype != np.float32:
        return False
    if x.ndim != 2 or w.ndim != 2 or bias.ndim != 1 or out.ndim != 2:
        return False
    m, k = x.shape
    if not takes_rows(m):
        return False
    n = w.shape[1]
    if m * n * k < MIN_MACS or w.shape[0] != k or bias.shape[0] != n or out.shape != (m, n):
        return False
    if not (_strided_ok(x) and _strided_ok(w) and bias.strides[0] == bias.itemsize
            and out.strides == (n * out.itemsize, out.itemsize)):
        return False
    lib = onednn.library()
    if lib is None:
        return False
    plan = _plan(lib, x, w, out, bool(relu), lib.threads())
    if plan is None:
        return False
    plan.run(x, w, bias, out)
    return True
