"""Quantized tensors: an integer tensor (`int_repr()`) plus its quantization parameters, kept
beside Tensor as a small class (like the sparse layouts) so the strided core stays untouched.
Values round as PyTorch's do, half to even on float32, clamped to the dtype's range: per
tensor x * (1 / scale) + zero_point rounded (fbgemm's fused multiply-add), per channel the
same with the product and the sum each rounded to float32 (fbgemm's scalar Quantize). Only
the inspection API and dequantize() are offered: PyTorch runs arithmetic on quantized
tensors through quantized modules, not Tensor ops."""
import numpy as np

from tensorlib.ao.quantization import _qtypes as qt


def _tensorlib():
    import tensorlib
    return tensorlib


def _float_input(x, what):
    tl = _tensorlib()
    if not isinstance(x, tl.Tensor):
        raise TypeError(f"{what}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if x.dtype is not tl.float32:
        raise RuntimeError(f"Quantize only works on Float Tensor, got {x.dtype.scalar_name}")
    return x.detach().cpu().numpy()


def _check_qdtype(dtype):
    if dtype not in qt.QDTYPES:
        name = getattr(dtype, "scalar_name", dtype)
        raise RuntimeError(f"ScalarType {name} is not supported in new_qtensor.")


def _scalar(v, kind):
    return kind(v.item()) if hasattr(v, "item") else kind(v)


def _clamped(rounded, dtype):
    """Rounded float32 values in dtype's range, clamped in float64: qint32's top,
    2**31 - 1, is not a float32 (it would round up and wrap to -2**31)."""
    return np.clip(rounded.astype(np.float64), dtype.quant_min, dtype.quant_max).astype(dtype.np)


def _round(values, inv_scale, zero_point, dtype):
    """round_half_even(values * inv_scale + zero_point), each step rounded to float32, then
    clamped: fbgemm's scalar Quantize, which PyTorch's per-channel quantization calls per
    element (a product that lands on a tie stays on it: -1.3 / 0.2 + 1 rounds to -6)."""
    q = (values * inv_scale).astype(np.float32) + np.asarray(zero_point).astype(np.float32)
    return _clamped(np.rint(q), dtype)


def _check_zero_points(zero_points, dtype, where):
    """PyTorch's bounds on a zero point: the quantized dtype's range."""
    z = np.asarray(zero_points).reshape(-1)
    if z.size and z.max() > dtype.quant_max:
        raise RuntimeError(f"{where} zero_point {int(z.max())} is above upper bound.")
    if z.size and z.min() < dtype.quant_min:
        raise RuntimeError(f"{where} zero_point {int(z.min())} is below lower bound.")


def _round_fused(values, inv_scale, zero_point, dtype):
    """round_half_even(fma(values, inv_scale, zero_point)) clamped, on float32: fbgemm's
    per-tensor quantization (the zero point is added before rounding, so ties
    fall differently from _round's)."""
    t = (values.astype(np.float64) * np.float64(inv_scale) + zero_point).astype(np.float32)
    return _clamped(np.rint(t), dtype)


class QuantizedTensor:
    """A quantized tensor (is_quantized): dtype qint8/quint8/qint32, per-tensor or per-channel
    affine parameters; dequantize() gives float32 back."""

    is_quantized = True
    is_sparse = False
    requires_grad = False

    def __init__(self, int_repr, dtype, qscheme, scale, zero_point, axis=None):
        self._int, self.dtype, self._qscheme = int_repr, dtype, qscheme
        self._scale, self._zero_point, self._axis = scale, zero_point, axis

    @property
    def shape(self):
        return self._int.shape

    @property
    def device(self):
        return self._int.device

    def size(self, dim=None):
        return self._int.size() if dim is None else self._int.size(dim)

    def dim(self):
        return self._int.dim()

    def numel(self):
        return self._int.numel()

    def element_size(self):
        return self.dtype.itemsize

    def int_repr(self):
        return self._int.clone()

    def qscheme(self):
        return self._qscheme

    def _per_tensor(self):
        if self._axis is not None:
            raise RuntimeError("Expected quantizer->qscheme() == kPerTensorAffine to be true, "
                               "but got false.")

    def _per_channel(self):
        if self._axis is None:
            raise RuntimeError("Expected quantizer->qscheme() == kPerChannelAffine || "
                               "quantizer->qscheme() == kPerChannelAffineFloatQParams to be "
                               "true, but got false.")

    def q_scale(self):
        self._per_tensor()
        return self._scale

    def q_zero_point(self):
        self._per_tensor()
        return self._zero_point

    def q_per_channel_scales(self):
        self._per_channel()
        return self._scale.clone()

    def q_per_channel_zero_points(self):
        self._per_channel()
        return self._zero_point.clone()

    def q_per_channel_axis(self):
        self._per_channel()
        return self._axis

    def dequantize(self):
        tl = _tensorlib()
        q = self._int.cpu().numpy().astype(np.float32)
        if self._axis is None:
            out = (q - np.float32(self._zero_point)) * np.float32(self._scale)
        else:
            shape = [1] * q.ndim
            shape[self._axis] = -1
            zp = self._zero_point.numpy().astype(np.float32).reshape(shape)
            out = (q - zp) * self._scale.numpy().astype(np.float32).reshape(shape)
        return tl.tensor(out.astype(np.float32), device=self.device)

    def __len__(self):
        return len(self._int)

    def __repr__(self):
        body = repr(self.dequantize())
        body = body[:-1] if body.endswith(")") else body
        suffixes = [f"size={tuple(self.shape)}", f"dtype={self.dtype}",
                    f"quantization_scheme={self._qscheme}"]
        if self._axis is None:
            suffixes += [f"scale={self._scale}", f"zero_point={self._zero_point}"]
        else:
            suffixes += [f"scale={self._scale!r}", f"zero_point={self._zero_point!r}",
                         f"axis={self._axis}"]
        return _add_suffixes(body, suffixes, len("tensor("))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the "
                                  "'QuantizedCPU' backend: quantized tensors support "
                                  "int_repr, the q_* accessors and dequantize()")


def _add_suffixes(text, suffixes, indent, linewidth=80):
    """PyTorch's printing of the keyword suffixes: on the line while it fits, else wrapped."""
    parts, last = [text], len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


def quantize_per_tensor(input, scale, zero_point, dtype):
    """torch.quantize_per_tensor: round(input / scale) + zero_point in dtype's range."""
    _check_qdtype(dtype)
    x = _float_input(input, "quantize_per_tensor")
    scale, zero_point = _scalar(scale, float), _scalar(zero_point, int)
    _check_zero_points(zero_point, dtype, "quantize_tensor_per_tensor_affine")
    inv = np.float32(1.0) / np.float32(scale)
    q = _round_fused(x.astype(np.float32), inv, zero_point, dtype)
    tl = _tensorlib()
    return QuantizedTensor(tl.tensor(q, device=input.device), dtype, qt.per_tensor_affine,
                           scale, zero_point)


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """torch.quantize_per_channel: one (scale, zero point) per index of `axis`."""
    _check_qdtype(dtype)
    x = _float_input(input, "quantize_per_channel")
    if not 0 <= axis < x.ndim:
        raise RuntimeError("Channel axis out of range in per channel affine quantization. "
                           f"Got: {axis}Expected: [0, {x.ndim})")
    tl = _tensorlib()
    s = np.asarray(scales.detach().cpu().numpy(), dtype=np.float64).reshape(-1)
    z = np.asarray(zero_points.detach().cpu().numpy(), dtype=np.int64).reshape(-1)
    for values, name in ((s, "scales"), (z, "zero_points")):
        if values.size != x.shape[axis]:
            raise RuntimeError(f"length of {name} must equal to channel, expected "
                               f"{x.shape[axis]} got, {values.size}")
    _check_zero_points(z, dtype, "quantize_tensor_per_channel_affine")
    shape = [1] * x.ndim
    shape[axis] = -1
    inv = (np.float32(1.0) / s.astype(np.float32)).reshape(shape)
    q = _round(x.astype(np.float32), inv, z.reshape(shape), dtype)
    return QuantizedTensor(tl.tensor(q, device=input.device), dtype, qt.per_channel_affine,
                           tl.tensor(s), tl.tensor(z), axis)


def dequantize(tensor):
    """torch.dequantize: float32 values of a quantized tensor; a float tensor comes back as is
    (a list or tuple of tensors gives a list)."""
    if isinstance(tensor, (list, tuple)):
        return [dequantize(t) for t in tensor]
    if isinstance(tensor, QuantizedTensor):
        return tensor.dequantize()
    return tensor


def install(tensor_cls, namespace):
    """The quantized dtypes, schemes and functions in tensorlib; Tensor's quantized API for
    dense tensors (is_quantized False, dequantize() itself, the accessors refusing)."""
    for name in ("qint8", "quint8", "qint32") + tuple(s.name for s in qt.QSCHEMES):
        namespace[name] = getattr(qt, name)
    namespace["qscheme"] = qt.QScheme
    namespace.update(quantize_per_tensor=quantize_per_tensor,
                     quantize_per_channel=quantize_per_channel, dequantize=dequantize)
    tensor_cls.is_quantized = False
    tensor_cls.dequantize = lambda self: self
    for name in ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
                 "q_per_channel_zero_points", "q_per_channel_axis", "qscheme"):
        setattr(tensor_cls, name, _refused(name))


def _refused(name):
    def refused(self, *args, **kwargs):
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the "
                                  f"'{self.device.type.upper()}' backend: it takes a quantized "
                                  "tensor")
    refused.__name__ = name
    return refused
