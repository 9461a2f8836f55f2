"""The dynamically quantized Linear's product on the host, in int8 with int32 accumulation:
the activation is quantized per call to quint8 in C (quant_kernels; fbgemm's reduce_range:
0..127, so a pair of u8*s8 products cannot saturate a 16-bit VNNI intermediate, as PyTorch
does on x86), multiplied with the qint8 weight on oneDNN's int8 matmul primitive (AMX/VNNI
where the CPU has them; onednn_qlinear), which also rescales and adds the bias, or, without
oneDNN, on numpy's integer matmul (a C loop over int32) and quant_kernels' rescale; both
round the same way. tensorlib.ao.nn.quantized.dynamic.Linear looks this kernel up by name."""
import numpy as np

from tensorlib._C.tensor_impl import host_array as _h
from tensorlib_cpu import fastreduce, onednn_qlinear, quant_kernels

__all__ = ["KERNELS", "quantized_linear_dynamic"]


def _scales(weight_scale):
    """float32 weight scales as an array ((1,) per tensor, (n,) per channel) from a float
    or a tensor (0-d or (n,))."""
    if isinstance(weight_scale, (float, int)):
        return np.array([weight_scale], np.float32)
    return _h(weight_scale).astype(np.float32).reshape(-1)


def quantized_linear_dynamic(out, x, weight, weight_scale, bias, reduce_range):
    """out (m, n) float32 = dequantized(quantize(x) @ weight.T) + bias, x float32 (m, k),
    weight an int8 (n, k) tensor with zero point 0 and a scale per tensor (a float or a 0-d
    tensor) or per output channel (a float tensor of n)."""
    threads = fastreduce.threads_now()
    xa = np.ascontiguousarray(_h(x), dtype=np.float32)
    m, k = xa.shape
    qmax = 127 if reduce_range else 255
    wq = np.ascontiguousarray(_h(weight))
    ws = _scales(weight_scale)
    b = None if bias is None else np.ascontiguousarray(_h(bias), dtype=np.float32)
    plan = onednn_qlinear.plan(m, k, wq.shape[0], ws.shape[0] > 1, b is not None)
    xq = np.empty((m, k if plan is None else plan.kp), np.uint8)
    scale, zero_point = quant_kernels.quantize_activation(xa, xq, qmax, threads)
    o = _h(out)
    if plan is not None:
        plan.linear(o, xq, zero_point, scale, weight, wq, ws, b)
        return
    acc = np.matmul(xq.astype(np.int32) - np.int32(zero_point), wq.astype(np.int32).T)
    combined = (np.float32(scale) * ws).astype(np.float32)
    quant_kernels.rescale(acc, o, combined, b, threads)


KERNELS = {"quantized_linear_dynamic": quantized_linear_dynamic}
