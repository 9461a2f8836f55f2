"""torch.ao.nn.quantized.dynamic.Linear: a qint8 weight (per-tensor, symmetric) whose product
with the float input runs in int8 with int32 accumulation on the device's
`quantized_linear_dynamic` kernel (the CPU's: oneDNN's u8s8s32 GEMM), the input quantized per
call as PyTorch's fbgemm path does (quint8, reduce_range on x86)."""
import tensorlib
from tensorlib.ops._composites import optional_kernel
from tensorlib.ao.quantization import _qtypes as qt
from tensorlib.ao.quantization._qtensor import QuantizedTensor, quantize_per_tensor
from tensorlib.nn.modules.module import Module


def observed_qint8_weight(weight, qconfig, what):
    """A float weight quantized to qint8 per tensor with the qconfig's weight observer (per-tensor
    symmetric MinMax by default), a fresh observer per weight as PyTorch's from_float does."""
    from tensorlib.ao.quantization.qconfig import default_dynamic_qconfig
    observer = (qconfig or default_dynamic_qconfig).weight()
    if observer.dtype is not qt.qint8:
        raise RuntimeError(f"Unsupported dtype specified for dynamic quantized {what}: "
                           f"{observer.dtype}")
    if observer.qscheme not in (qt.per_tensor_symmetric, qt.per_tensor_affine):
        raise NotImplementedError(f"dynamic quantized {what} here takes a per-tensor weight "
                                  f"observer, not {observer.qscheme}")
    observer(weight.detach())
    scale, zero_point = observer.calculate_qparams()
    return quantize_per_tensor(weight.detach().float(), float(scale.item()),
                               int(zero_point.item()), qt.qint8)


def linear_dynamic(x, weight, weight_scale, bias, reduce_range=True):
    """x (m, k) float32 times a (n, k) int8 weight, x quantized per call: the device's
    `quantized_linear_dynamic` kernel."""
    kernel = optional_kernel(x._device, "quantized_linear_dynamic")
    if kernel is None:
        raise NotImplementedError("quantized::linear_dynamic is not implemented on "
                                  f"{x.device.type}: dynamic quantization runs on the CPU")
    out = tensorlib.empty(x.shape[0], weight.shape[0], device=x.device)
    kernel(out, x.contiguous(), weight, weight_scale, bias, reduce_range)
    return out


class LinearPackedParams(Module):
    """The quantized weight and float bias, as buffers: state_dict keys
    `_packed_params.weight` (int8 int_repr), `_packed_params.weight_scale`, `_packed_params.bias`."""

    def __init__(self, weight, bias):
        super().__init__()
        self.set_weight_bias(weight, bias)

    def set_weight_bias(self, weight, bias):
        if weight.dtype is not qt.qint8 or weight.qscheme() is not qt.per_tensor_affine:
            raise RuntimeError("dynamic quantized Linear takes a per-tensor qint8 weight, got "
                               f"{weight.dtype} {weight.qscheme()}")
        if weight.q_zero_point() != 0:
            raise RuntimeError("dynamic quantized Linear expects a symmetric weight (zero point 0)")
        self.register_buffer("weight", weight.int_repr())
        self.register_buffer("weight_scale", tensorlib.tensor(weight.q_scale(),
                                                              dtype=tensorlib.float64))
        self.register_buffer("bias", None if bias is None else bias.detach().float().clone())

    def unpack(self):
        scale = float(self.weight_scale.item())
        return (QuantizedTensor(self.weight.clone(), qt.qint8, qt.per_tensor_affine, scale, 0),
                self.bias)


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
                f"dtype={qt.qint8}, qscheme={qt.per_tensor_affine}")

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
        p = self._packed_params
        out = linear_dynamic(x.reshape(-1, self.in_features), p.weight, p.weight_scale.item(),
                             p.bias, self.reduce_range)
        return out.reshape(*x.shape[:-1], self.out_features)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized copy of a float nn.Linear, its weight observed by the qconfig's
        weight observer (per-tensor symmetric MinMax by default)."""
        weight = observed_qint8_weight(mod.weight, getattr(mod, "qconfig", None), "Linear")
        new = cls(mod.in_features, mod.out_features, bias_=mod.bias is not None)
        new.set_weight_bias(weight, mod.bias)
        return new
