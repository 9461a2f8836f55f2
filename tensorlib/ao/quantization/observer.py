"""Observers (torch.ao.quantization.observer): they watch tensors and choose quantization
parameters the way PyTorch's do (float32 arithmetic, the range widened to hold 0, the scale
at least float32's eps)."""
import functools

import numpy as np

from tensorlib.ao.quantization import _qtypes as qt
from tensorlib.nn.modules.module import Module

_EPS = np.float32(np.finfo(np.float32).eps)
_SYMMETRIC = (qt.per_tensor_symmetric, qt.per_channel_symmetric)


def _with_args(cls, **kwargs):
    return functools.partial(cls, **kwargs)


class ObserverBase(Module):
    """What every observer has: a dtype, and `with_args` to make a configured factory."""

    with_args = classmethod(_with_args)

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype, self.is_dynamic = dtype, is_dynamic


class PlaceholderObserver(ObserverBase):
    """Records nothing: the dynamic activation's stand-in (its qparams come per call)."""

    def __init__(self, dtype=qt.quint8, custom_op_name="", compute_dtype=None, quant_min=None,
                 quant_max=None, qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype, is_dynamic)
        self.quant_min, self.quant_max, self.qscheme = quant_min, quant_max, qscheme

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")


class MinMaxObserver(ObserverBase):
    """Running min and max of everything observed; per-tensor parameters."""

    def __init__(self, dtype=qt.quint8, qscheme=qt.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS,
                 is_dynamic=False):
        super().__init__(dtype, is_dynamic)
        if qscheme not in qt.QSCHEMES:
            raise NotImplementedError(f"Default Observer only works for per_tensor_affine, "
                                      f"per_tensor_symmetric, per_channel_affine, "
                                      f"per_channel_symmetric and per_channel_float_qparams "
                                      f"quantization scheme, got {qscheme}")
        self.qscheme, self.reduce_range, self.eps = qscheme, reduce_range, np.float32(eps)
        if quant_min is None:
            quant_min, quant_max = dtype.quant_min, dtype.quant_max
            if reduce_range:
                quant_min, quant_max = quant_min // 2, quant_max // 2
        self.quant_min, self.quant_max = quant_min, quant_max
        self.min_val, self.max_val = None, None

    def _reduce_axes(self, x):
        return None

    def forward(self, x):
        a = x.detach().cpu().numpy().astype(np.float32)
        if a.size == 0:
            return x
        axes = self._reduce_axes(a)
        lo, hi = a.min(axis=axes), a.max(axis=axes)
        self.min_val = lo if self.min_val is None else np.minimum(self.min_val, lo)
        self.max_val = hi if self.max_val is None else np.maximum(self.max_val, hi)
        return x

    def calculate_qparams(self):
        """(scale float32 tensor, zero_point int64 tensor) as PyTorch's _calculate_qparams."""
        import tensorlib
        if self.min_val is None:
            lo = hi = np.zeros(1 if isinstance(self, PerChannelMinMaxObserver) else (),
                               np.float32)
        else:
            lo, hi = self.min_val, self.max_val
        lo, hi = np.minimum(lo, np.float32(0)), np.maximum(hi, np.float32(0))
        qmin, qmax = self.quant_min, self.quant_max
        if self.qscheme in _SYMMETRIC:
            hi = np.maximum(-lo, hi)
            scale = np.maximum((hi / np.float32((qmax - qmin) / 2)).astype(np.float32), self.eps)
            zero_point = np.full(np.shape(scale), 0 if self.dtype is not qt.quint8 else 128,
                                 np.int64)
        else:
            scale = np.maximum(((hi - lo) / np.float32(qmax - qmin)).astype(np.float32), self.eps)
            zero_point = np.clip(qmin - np.rint(lo / scale).astype(np.int64), qmin, qmax)
        return (tensorlib.tensor(np.asarray(scale, np.float32)),
                tensorlib.tensor(np.asarray(zero_point, np.int64)))

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class PerChannelMinMaxObserver(MinMaxObserver):
    """Min and max per index of `ch_axis`; per-channel parameters."""

    def __init__(self, ch_axis=0, dtype=qt.quint8, qscheme=qt.per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=_EPS, is_dynamic=False):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps,
                         is_dynamic)
        self.ch_axis = ch_axis

    def _reduce_axes(self, a):
        return tuple(d for d in range(a.ndim) if d != self.ch_axis % a.ndim)


default_placeholder_observer = PlaceholderObserver
default_dynamic_quant_observer = PlaceholderObserver.with_args(dtype=qt.quint8, quant_min=0,
                                                               quant_max=255, is_dynamic=True)
default_weight_observer = MinMaxObserver.with_args(dtype=qt.qint8,
                                                   qscheme=qt.per_tensor_symmetric)
default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=qt.qint8, qscheme=qt.per_channel_symmetric)
