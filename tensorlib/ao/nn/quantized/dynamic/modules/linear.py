"""torch.ao.nn.quantized.dynamic.Linear: a qint8 weight (symmetric, one scale per tensor or
per output channel) whose product with the float input runs in int8 with int32 accumulation
on the device's `quantized_linear_dynamic` kernel (the CPU's: oneDNN's int8 matmul), the
input quantized per call as PyTorch's fbgemm path does (quint8, reduce_range on x86)."""
import tensorlib
from tensorlib._C.factory import empty
from tensorlib.ops._composites import optional_kernel
from tensorlib.ao.quantization import _qtypes as qt
from tensorlib.ao.quantization._qtensor import (QuantizedTensor, quantize_per_channel,
                                                quantize_per_tensor)
from tensorlib.nn.modules.module import Module

_PER_CHANNEL = (qt.per_channel_symmetric, qt.per_channel_affine)


def observed_qint8_weight(weight, qconfig, what):
    """A float weight quantized to qint8 with the qconfig's weight observer (per-tensor
    symmetric MinMax by default; per output channel with a per-channel observer), a fresh
    observer per weight as PyTorch's from_float does."""
    from tensorlib.ao.quantization.qconfig import default_dynamic_qconfig
    observer = (qconfig or default_dynamic_qconfig).weight()
    if observer.dtype is not qt.qint8:
        raise RuntimeError(f"Unsupported dtype specified for dynamic quantized {what}: "
                           f"{observer.dtype}")
    if observer.qscheme not in (qt.per_tensor_symmetric, qt.per_tensor_affine) + _PER_CHANNEL:
        raise NotImplementedError(f"dynamic quantized {what} takes a per-tensor or "
                                  f"per-channel weight observer, not {observer.qscheme}")
    observer(weight.detach())
    scale, zero_point = observer.calculate_qparams()
    if observer.qscheme in _PER_CHANNEL:
        return quantize_per_channel(weight.detach().float(), scale.double(), zero_point,
                                    observer.ch_axis, qt.qint8)
    return quantize_per_tensor(weight.detach().float(), float(scale.item()),
                               int(zero_point.item()), qt.qint8)


def weight_buffers(weight, what):
    """(int8 int_repr, float64 scale: 0-d per tensor, (out,) per output channel) of a
    symmetric qint8 weight, as the packed parameters keep them."""
    if weight.dtype is not qt.qint8 or weight.qscheme() not in (qt.per_tensor_affine,
                                                                qt.per_channel_affine):
        raise RuntimeError(f"dynamic quantized {what} takes a qint8 weight quantized per "
                           f"tensor or per channel, got {weight.dtype} {weight.qscheme()}")
    if weight.qscheme() is qt.per_tensor_affine:
        if weight.q_zero_point() != 0:
            raise RuntimeError(f"dynamic quantized {what} expects a symmetric weight "
                               "(zero point 0)")
        return weight.int_repr(), tensorlib.tensor(weight.q_scale(), dtype=tensorlib.float64)
    if weight.q_per_channel_axis() != 0 or bool(weight.q_per_channel_zero_points().ne(0).any()):
        raise RuntimeError(f"dynamic quantized {what} expects per-channel weights along the "
                           "output channels (axis 0) with zero points 0")
    return weight.int_repr(), weight.q_per_channel_scales().double().clone()


def quantized_weight(int_repr, scale):
    """The quantized tensor the buffers of weight_buffers hold."""
    if scale.dim() == 0:
        return QuantizedTensor(int_repr.clone(), qt.qint8, qt.per_tensor_affine,
                               float(scale.item()), 0)
    zeros = tensorlib.zeros(scale.shape[0], dtype=tensorlib.int64)
    return QuantizedTensor(int_repr.clone(), qt.qint8, qt.per_channel_affine, scale.clone(),
                           zeros, 0)


def take_scale_shapes(module, state_dict, prefix, names):
    """Before loading a state_dict: a scale buffer takes the checkpoint's shape (per tensor
    or per channel), so a module built per tensor loads per-channel weights."""
    for name in names:
        incoming = state_dict.get(prefix + name)
        mine = getattr(module, name)
        if incoming is not None and tuple(incoming.shape) != tuple(mine.shape) \
                and incoming.dim() in (0, 1):
            module.register_buffer(name, tensorlib.empty(tuple(incoming.shape),
                                                         dtype=tensorlib.float64))


def linear_dynamic(x, weight, weight_scale, bias, reduce_range=True):
    """x (m, k) float32 times a (n, k) int8 weight with weight_scale (a float, or a float
    tensor: 0-d, or one per output channel), x quantized per call: the device's
    `quantized_linear_dynamic` kernel."""
    kernel = optional_kernel(x._device, "quantized_linear_dynamic")
    if kernel is None:
        raise NotImplementedError("quantized::linear_dynamic is not implemented on "
                                  f"{x.device.type}: dynamic quantization runs on the CPU")
    out = empty((x._sizes[0], weight._sizes[0]), tensorlib.float32, x._device)
    kernel(out, x.contiguous(), weight, weight_scale, bias, reduce_range)
    return out


class LinearPackedParams(Module):
    """The quantized weight and float bias, as buffers: state_dict keys
    `_packed_params.weight` (int8 int_repr), `_packed_params.weight_scale` (0-d, or one per
    output channel), `_packed_params.bias`."""

    def __init__(self, weight, bias):
        super().__init__()
        self.set_weight_bias(weight, bias)

    def set_weight_bias(self, weight, bias):
        int_repr, scale = weight_buffers(weight, "Linear")
        self.register_buffer("weight", int_repr)
        self.register_buffer("weight_scale", scale)
        self.register_buffer("bias", None if bias is None else bias.detach().float().clone())

    def unpack(self):
        return quantized_weight(self.weight, self.weight_scale), self.bias

    def _load_from_state_dict(self, state_dict, prefix, *args):
        take_scale_shapes(self, state_dict, prefix, ("weight_scale",))
        super()._load_from_state_dict(state_dict, prefix, *args)


class Linear(Module):
    """DynamicQuantizedLinear: y = dequantize(quantize(x) @ W_q.T) + bias, on float32 inputs."""

    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=qt.qint8):
        super().__init__()
        if dtype is not qt.qint8:
            raise RuntimeError(f"Unsupported dtype specified for dynamic quantized Linear: {dtype}")
        self.in_features, self.out_features = in_features, out_features
        weight = quantize_per_tensor(tensorlib.zeros(out_features, in_features), 1.0, 0, qt.qint8)
        bias = tensorlib.zeros(out_features) if bias_ else None
        self._packed_params = LinearPackedParams(weight, bias)
        self.reduce_range = True

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={qt.qint8}, qscheme={self.weight().qscheme()}")

    def __repr__(self):
        # the packed parameters are storage, not a layer: hidden as PyTorch hides them
        return f"{self._get_name()}({self.extra_repr()})"

    def weight(self):
        return self._packed_params.unpack()[0]

    def bias(self):
        return self._packed_params.unpack()[1]

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)

    def forward(self, x):
        if x.dtype is not tensorlib.float32:
            raise RuntimeError(f"expected scalar type Float but found {x.dtype.scalar_name}")
        if x.shape[-1] != self.in_features:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                               f"({x.numel() // max(x.shape[-1], 1)}x{x.shape[-1]} and "
                               f"{self.in_features}x{self.out_features})")
        buffers = self._packed_params._buffers       # three Module lookups cost 2 us
        flat = x if x.dim() == 2 else x.reshape(-1, self.in_features)
        out = linear_dynamic(flat, buffers["weight"], buffers["weight_scale"], buffers["bias"],
                             self.reduce_range)
        return out.reshape(*x.shape[:-1], self.out_features)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized copy of a float nn.Linear, its weight observed by the qconfig's
        weight observer (per-tensor symmetric MinMax by default, or per channel)."""
        weight = observed_qint8_weight(mod.weight, getattr(mod, "qconfig", None), "Linear")
        new = cls(mod.in_features, mod.out_features, bias_=mod.bias is not None)
        new.set_weight_bias(weight, mod.bias)
        return new
