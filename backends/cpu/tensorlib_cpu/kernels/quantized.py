"""The dynamically quantized Linear's product on the host, in int8 with int32 accumulation:
the activation is quantized per call to quint8 (fbgemm's reduce_range: 0..127, so a pair of
u8*s8 products cannot saturate a 16-bit VNNI intermediate, as PyTorch does on x86), multiplied
with the qint8 weight on oneDNN's `dnnl_gemm_u8s8s32` (VNNI/AMX where the CPU has them) or,
without oneDNN, numpy's integer matmul (a C loop over int32), then rescaled to float32.
tensorlib.ao.nn.quantized.dynamic.Linear looks this kernel up by name."""
import ctypes

import numpy as np

from tensorlib._C.tensor_impl import host_array as _h
from tensorlib_cpu import onednn

_U8P = ctypes.POINTER(ctypes.c_uint8)
_I8P = ctypes.POINTER(ctypes.c_int8)
_I32P = ctypes.POINTER(ctypes.c_int32)
_GEMM_ARGS = [ctypes.c_char, ctypes.c_char, ctypes.c_char, ctypes.c_int64, ctypes.c_int64,
              ctypes.c_int64, ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_uint8,
              ctypes.c_void_p, ctypes.c_int64, ctypes.c_int8, ctypes.c_float, ctypes.c_void_p,
              ctypes.c_int64, ctypes.c_void_p]
_state = {}


def _dnnl_gemm():
    """oneDNN's u8 x s8 -> s32 GEMM, or None when oneDNN is absent or turned off."""
    lib = onednn.library()
    if lib is None:
        return None
    if _state.get("lib") is not lib:
        fn = lib._dll.dnnl_gemm_u8s8s32
        fn.restype, fn.argtypes = ctypes.c_int, _GEMM_ARGS
        _state["lib"], _state["fn"] = lib, fn
    return _state["fn"]


def choose_activation_qparams(lo, hi, qmin=0, qmax=127):
    """fbgemm's ChooseQuantizationParams (what PyTorch's dynamic Linear calls per batch): the
    range widened to hold 0, the zero point from whichever end loses less, rounded to even."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = float(np.float32((hi - lo) / (qmax - qmin)))
    if scale == 0.0 or np.isinf(np.float32(1.0) / np.float32(scale)):
        scale = 0.1
    from_min, from_max = qmin - lo / scale, qmax - hi / scale
    err_min, err_max = abs(qmin) + abs(lo / scale), abs(qmax) + abs(hi / scale)
    initial = from_min if err_min < err_max else from_max
    zero_point = int(min(max(np.rint(initial), qmin), qmax))
    return scale, zero_point


def quantize_rows(x, scale, zero_point, qmin, qmax, npdtype):
    """round_half_even(fma(x, 1 / scale, zero_point)) clamped, on float32 like fbgemm."""
    q = (x.astype(np.float64) * np.float64(np.float32(1.0) / np.float32(scale))
         + zero_point).astype(np.float32)
    np.rint(q, out=q)
    np.clip(q, qmin, qmax, out=q)
    return q.astype(npdtype)


def int8_gemm(xq, x_zero_point, wq):
    """(xq - x_zero_point) @ wq.T in int32: xq uint8 (m, k), wq int8 (n, k), both C order."""
    m, k = xq.shape
    n = wq.shape[0]
    acc = np.empty((m, n), dtype=np.int32)
    gemm = _dnnl_gemm()
    if gemm is not None and m and n and k:
        offset = np.zeros(1, dtype=np.int32)
        status = gemm(b"N", b"T", b"F", m, n, k, 1.0, xq.ctypes.data, k, x_zero_point,
                      wq.ctypes.data, k, 0, 0.0, acc.ctypes.data, n, offset.ctypes.data)
        if status == 0:
            return acc
    np.matmul(xq.astype(np.int32) - np.int32(x_zero_point), wq.astype(np.int32).T, out=acc)
    return acc


def quantized_linear_dynamic(out, x, weight, weight_scale, bias, reduce_range):
    """out (m, n) float32 = dequantized(quantize(x) @ weight.T) + bias, x float32 (m, k),
    weight an int8 (n, k) tensor with zero point 0 and a per-tensor scale."""
    xa = np.ascontiguousarray(_h(x), dtype=np.float32)
    qmax = 127 if reduce_range else 255
    if xa.size:
        scale, zero_point = choose_activation_qparams(xa.min(), xa.max(), 0, qmax)
    else:
        scale, zero_point = 1.0, 0
    xq = quantize_rows(xa, scale, zero_point, 0, qmax, np.uint8)
    acc = int8_gemm(xq, zero_point, np.ascontiguousarray(_h(weight)))
    o = _h(out)
    np.multiply(acc, np.float32(np.float32(scale) * np.float32(weight_scale)), out=o,
                casting="unsafe")
    if bias is not None:
        o += _h(bias)


KERNELS = {"quantized_linear_dynamic": quantized_linear_dynamic}
