"""Batched GEMM: float32/float64 through tensorlib_cpu.gemm (BLAS on the backend's OpenMP
threads); float16/bfloat16 through MKL's bf16/fp16 GEMMs where the `mkl` wheel is installed
and the CPU multiplies that dtype natively (AVX512-BF16/FP16, AMX), else on float32 copies;
either way accumulated in float32 and rounded once at the end (as
oneDNN's low-precision GEMMs; numpy has no BLAS for them); other dtypes through numpy's
matmul. BLAS reads only matrices with a unit stride in
one dimension (numpy takes a slow generic loop for others, 10x and more), so such operands are
made contiguous first; and a right operand shared by the whole batch (stride 0: x @ W with x
3-D) becomes one large GEMM instead of B small ones."""
import ml_dtypes  # noqa: F401 - registers numpy's 'bfloat16' dtype name
import numpy as np

from tensorlib._C.tensor_impl import host_array as _h
from tensorlib_cpu import gemm as _gemm_module
from tensorlib_cpu import onednn_linear
from tensorlib_cpu.gemm import gemm, gemm_batched, gemm_bias, gemm_low_precision, gemm_pair


def _blasable(m):
    """A 2-D matrix BLAS can read as is: unit stride along one dim."""
    s0, s1 = m.strides
    item = m.itemsize
    return (s1 == item and s0 >= m.shape[1] * item) or (s0 == item and s1 >= m.shape[0] * item)


def _ready(m):
    return m if _blasable(m) else np.ascontiguousarray(m)


def _ready_batch(t):
    """(B, R, C): contiguous where BLAS needs it; a stride-0 batch stays a broadcast."""
    if t.shape[0] > 1 and t.strides[0] == 0:
        return np.broadcast_to(_ready(t[0]), t.shape)
    return t if _blasable(t[0]) else np.ascontiguousarray(t)


_WIDENED = (np.dtype(np.float16), np.dtype("bfloat16"))


def matmul(out, a, b):
    matmul_arrays(_h(out), _h(a), _h(b))


def matmul_arrays(o, av, bv):
    """o (B, m, n) = av (B, m, k) @ bv (B, k, n) on host arrays."""
    if o.dtype in _WIDENED:
        wide = np.empty(o.shape, np.float32)
        native = o.dtype.name in _gemm_module.LOW_PRECISION_DTYPES
        if not (native and gemm_low_precision(_ready_batch(av), _ready_batch(bv), wide)):
            _matmul(wide, av.astype(np.float32), bv.astype(np.float32))
        o[...] = wide
        return
    _matmul(o, av, bv)


def mm(out, a, b):
    """out (m, n) = a (m, k) @ b (k, n), or (m,) = (m, k) @ (k,): matmul's fast path for
    matrices, one BLAS call when the layouts allow, else the batched path's handling."""
    o, av, bv = _h(out), _h(a), _h(b)
    if bv.ndim == 1:
        o, bv = o[:, None], bv[:, None]
    if not gemm(av, bv, o):          # float32/float64 only; the rest as batched
        matmul_arrays(o[None], av[None], bv[None])


def addmm(out, a, b, beta, alpha):
    """out (m, n) = beta * out + alpha * a @ b, out already holding the broadcast input: one
    BLAS call (beta onto the output) instead of a product and a separate add pass."""
    o, av, bv = _h(out), _h(a), _h(b)
    if not gemm(av, bv, o, alpha, beta):
        product = np.empty(o.shape, o.dtype)
        matmul_arrays(product[None], av[None], bv[None])
        o *= beta
        o += alpha * product


def addmm_bias(out, a, b, bias):
    """out (m, n) = a @ b + bias (n,): a Linear layer's forward, on oneDNN's matmul primitive
    with the bias in its epilogue (onednn_linear), else the bias written into each thread's
    rows of out just before its product (gemm_bias); returns False, writing nothing, when
    BLAS or the bias's layout does not allow it."""
    o, av, bv, bias_v = _h(out), _h(a), _h(b), _h(bias)
    return onednn_linear.linear(av, bv, bias_v, o) or gemm_bias(av, bv, bias_v, o)


def addmm_bias_relu(out, a, b, bias):
    """out (m, n) = relu(a @ b + bias): the bias and relu in the matmul primitive's epilogue
    (onednn_linear); returns False, writing nothing, where that does not apply."""
    return onednn_linear.linear(_h(a), _h(b), _h(bias), _h(out), relu=True)


def mm_pair(out1, a1, b1, out2, a2, b2):
    """out1 = a1 @ b1 and out2 = a2 @ b2, two independent 2-D float32/float64 products of
    one dtype, side by side on the threads (a linear layer's input and weight gradients);
    returns False, writing nothing, when BLAS cannot take them as they are."""
    return gemm_pair(_h(a1), _h(b1), _h(out1), _h(a2), _h(b2), _h(out2))


def _matmul(o, av, bv):
    batch, m, k = av.shape
    n = bv.shape[2]
    if batch == 0:
        return
    if batch == 1:
        _product(_ready(av[0]), _ready(bv[0]), o[0])
    elif bv.strides[0] == 0 and o.flags.c_contiguous:
        rows = np.reshape(av, (batch * m, k))            # a view when av allows, else a copy
        _product(_ready(rows), _ready(bv[0]), o.reshape(batch * m, n))
    else:
        left, right = _ready_batch(av), _ready_batch(bv)
        if not gemm_batched(left, right, o):
            np.matmul(left, right, out=o)


def _product(a, b, out):
    if not gemm(a, b, out):
        np.matmul(a, b, out=out)


KERNELS = {"matmul": matmul, "mm": mm, "addmm": addmm, "mm_pair": mm_pair,
           "addmm_bias": addmm_bias, "addmm_bias_relu": addmm_bias_relu}
