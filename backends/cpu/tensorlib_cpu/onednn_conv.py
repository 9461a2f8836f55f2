"""2-D convolution (also with its bias added in the same pass), its input gradient and its
weight gradient on oneDNN, for float32, with the im2col + GEMM kernels of conv_kernels as the
fallback (other dtypes, no oneDNN, TENSORLIB_ONEDNN=0, the few-channel gradients where
im2col measured faster, or a case oneDNN declines).

One plan per (op, shapes, layouts, stride, padding, dilation, groups) is cached: the primitive
and the reorders between the caller's layout (NCHW, or channels-last as given) and the one
oneDNN chose (format `any`: its blocked layouts, whose kernels are the fast ones). The kernels
have the dispatch table's signature ``kernel(out, x, w_or_g, stride, padding, dilation,
groups)``, as conv_kernels'."""
import ctypes
from collections import OrderedDict

import numpy as np

from tensorlib._C import views as _v
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import host_array
from tensorlib_cpu import conv_kernels, onednn
from tensorlib_cpu.onednn import Descriptor, Memory, OneDNNError, Primitive

__all__ = ["KERNELS", "MIN_CHANNELS", "conv2d", "conv2d_bias", "conv2d_weight_grad",
           "conv_transpose2d", "describe"]

# Plans kept (oldest dropped first): each holds a primitive, its reorders and descriptors.
CACHE_SIZE = 128
_plans = OrderedDict()


def _dense(a):
    """a itself when oneDNN can read it in place (C order or channels-last), else a C copy."""
    if a.flags.c_contiguous or (a.ndim == 4 and a.transpose(0, 2, 3, 1).flags.c_contiguous):
        return a
    return np.ascontiguousarray(a)


def _pooled_dense(t):
    """t when its memory is dense (C order or channels-last), else a C-order copy in a tensor
    from the backend's memory pool. The output gradient of a convolution whose result was
    summed or averaged is a scalar expanded (stride 0); both gradient kernels copy it, and
    into fresh numpy memory each call those copies took ~1,000 page faults per 4 MiB (3,900
    per forward+backward step of the 3->32 benchmark convolution, ~2 ms of a 4 ms step on
    the shared AMD EPYC). The pool hands the same pages back."""
    a = host_array(t)
    if a.size == 0 or _dense(a) is a:
        return t
    copy = empty(t._sizes, t._dtype, t._device)
    np.copyto(host_array(copy), a)
    return copy


def _layout(a):
    """(shape, element strides) of a dense float32 array."""
    return tuple(a.shape), tuple(s // 4 for s in a.strides)


def _weights_shape(w_shape, groups):
    if groups == 1:
        return tuple(w_shape)
    o = w_shape[0]
    return (groups, o // groups) + tuple(w_shape[1:])


def _weights_layout(w, groups):
    """A weight (O, C/G, kh, kw) as oneDNN's grouped (G, O/G, C/G, kh, kw) when groups > 1."""
    if groups == 1:
        return _layout(w)
    shape = _weights_shape(w.shape, groups)
    strides = tuple(s // 4 for s in w.strides)
    return shape, (shape[1] * strides[0],) + strides


def _geometry(x_shape, w_shape, y_shape, stride, padding, dilation):
    """oneDNN's strides, dilates (dilation - 1), left and right padding."""
    right = [(y_shape[2 + i] - 1) * stride[i] + (w_shape[2 + i] - 1) * dilation[i] + 1
             - x_shape[2 + i] - padding[i] for i in range(2)]
    return (onednn.dims(stride), onednn.dims([d - 1 for d in dilation]), onednn.dims(padding),
            onednn.dims(right))


class _Plan:
    """A convolution primitive and the reorders around it. `inputs`/`outputs`: (argument id,
    the caller's Memory, the query for the primitive's own layout, None: as given) in the
    order `run` takes arrays."""

    def __init__(self, lib, pd, inputs, outputs):
        self.lib = lib
        self._user = []
        self._inner = []
        self._before, self._after = [], []
        args = []
        try:
            for i, (arg, user, query) in enumerate(inputs + outputs):
                inner = user if query is None else Memory.chosen(lib, pd, query)
                if inner.same_as(user):
                    inner = user
                elif i < len(inputs):
                    self._before.append(Primitive.reorder(lib, user, inner))
                else:
                    self._after.append(Primitive.reorder(lib, inner, user))
                self._user.append(user)
                self._inner.append(inner)
                args.append((arg, inner))
        except Exception:
            lib.primitive_desc_destroy(pd)
            raise
        self.primitive = Primitive(lib, pd, args)

    def run(self, *arrays):
        scratch = []
        with self.lib.lock:
            for a, user, inner in zip(arrays, self._user, self._inner):
                user.bind(a.ctypes.data)
                if inner is not user:
                    scratch.append(onednn.buffer(inner.nbytes))
                    inner.bind(scratch[-1].ctypes.data)
            self.lib.sync_threads()
            for step in self._before:
                step.run()
            self.primitive.run()
            for step in self._after:
                step.run()
            self.lib.call("stream_wait", self.lib.stream)


def _descriptors(lib, x, w, y, groups):
    """Format `any` for the input, weight and output: oneDNN's blocked layouts (nChw8c on
    AVX2). Measured against the caller's own NCHW layout on one thread: 0.5-0.9x the time
    for every op of the two benchmark convolutions, reorders included."""
    return (Descriptor.any(lib, x.shape), Descriptor.any(lib, _weights_shape(w.shape, groups)),
            Descriptor.any(lib, y.shape))


def _forward_pd(lib, x, w, y, user_b, groups, geometry):
    """The training forward descriptor (also the hint of both backward descriptors)."""
    src, wgt, dst = _descriptors(lib, x, w, y, groups)
    pd = ctypes.c_void_p()
    lib.call("convolution_forward_primitive_desc_create", ctypes.byref(pd), lib.engine,
             onednn.FORWARD_TRAINING, onednn.CONVOLUTION_DIRECT, src.md, wgt.md,
             None if user_b is None else user_b.md, dst.md, *geometry, None)
    return pd


def _make_plan(kind, lib, x, w, y, b, stride, padding, dilation, groups):
    """x, w, y: the input, weight and output arrays (whichever of them is the result); b: the
    bias of a forward convolution, or None."""
    geometry = _geometry(x.shape, w.shape, y.shape, stride, padding, dilation)
    user_x = Memory.strided(lib, *_layout(x))
    user_w = Memory.strided(lib, *_weights_layout(w, groups))
    user_y = Memory.strided(lib, *_layout(y))
    user_b = None if b is None else Memory.strided(lib, *_layout(b))
    fwd = _forward_pd(lib, x, w, y, user_b if kind == "fwd" else None, groups, geometry)
    if kind == "fwd":
        bias = [] if b is None else [(onednn.ARG_BIAS, user_b, None)]
        return _Plan(lib, fwd, [(onednn.ARG_SRC, user_x, onednn.QUERY_SRC_MD),
                                (onednn.ARG_WEIGHTS, user_w, onednn.QUERY_WEIGHTS_MD)] + bias,
                     [(onednn.ARG_DST, user_y, onednn.QUERY_DST_MD)])
    try:
        src, wgt, dst = _descriptors(lib, x, w, y, groups)
        pd = ctypes.c_void_p()
        if kind == "data":
            lib.call("convolution_backward_data_primitive_desc_create", ctypes.byref(pd),
                     lib.engine, onednn.CONVOLUTION_DIRECT, src.md, wgt.md, dst.md, *geometry,
                     fwd, None)
            return _Plan(lib, pd, [(onednn.ARG_DIFF_DST, user_y, onednn.QUERY_DIFF_DST_MD),
                                   (onednn.ARG_WEIGHTS, user_w, onednn.QUERY_WEIGHTS_MD)],
                         [(onednn.ARG_DIFF_SRC, user_x, onednn.QUERY_DIFF_SRC_MD)])
        lib.call("convolution_backward_weights_primitive_desc_create", ctypes.byref(pd),
                 lib.engine, onednn.CONVOLUTION_DIRECT, src.md, wgt.md, None, dst.md,
                 *geometry, fwd, None)
        return _Plan(lib, pd, [(onednn.ARG_SRC, user_x, onednn.QUERY_SRC_MD),
                               (onednn.ARG_DIFF_DST, user_y, onednn.QUERY_DIFF_DST_MD)],
                     [(onednn.ARG_DIFF_WEIGHTS, user_w, onednn.QUERY_DIFF_WEIGHTS_MD)])
    finally:
        lib.primitive_desc_destroy(fwd)


def _plan(kind, lib, x, w, y, b, stride, padding, dilation, groups):
    """The cached plan, or None where oneDNN has no implementation for the case."""
    key = (kind, x.shape, x.strides, w.shape, w.strides, y.shape, y.strides, b is None,
           tuple(stride), tuple(padding), tuple(dilation), groups)
    plan = _plans.get(key)
    if plan is None and key not in _plans:
        try:
            plan = _make_plan(kind, lib, x, w, y, b, stride, padding, dilation, groups)
        except OneDNNError:
            plan = None
        _plans[key] = plan
        while len(_plans) > CACHE_SIZE:
            _plans.popitem(last=False)
    return plan


def _arrays(*tensors):
    """The host arrays of the tensors, in a layout oneDNN reads, or None when not all are
    non-empty float32 (those stay on im2col)."""
    arrays = [host_array(t) for t in tensors]
    if any(a.dtype != np.float32 or a.size == 0 for a in arrays):
        return None
    return arrays


# Input channels below which im2col stays faster than oneDNN for a gradient. Measured on one
# thread (AMD EPYC Zen 3, AVX2): with 1 or 3 channels oneDNN's input gradient took 1.5-5.5x
# the time of col2im (the channels are padded to a block of 8 and reordered), with 6 it took
# 0.8x; with 1 channel its weight gradient took 2.6x our direct kernel's, with 3 0.1-0.2x.
# Forward convolutions took 0.06-0.9x im2col's time on every case tried (depthwise, 1x1,
# strided, 1-64 channels), so they always go to oneDNN.
MIN_CHANNELS = {"fwd": 1, "data": 4, "wgt": 2}


def _run(kind, arrays, order, stride, padding, dilation, groups):
    """Runs one op on oneDNN; False when it cannot or should not (the caller falls back).
    arrays: the result first (written in place, so it must already be dense), then the
    operands; order: where x, w, y (and a forward's bias) are among them."""
    lib = onednn.library()
    if lib is None or arrays is None or _dense(arrays[0]) is not arrays[0]:
        return False
    dense = [arrays[0]] + [_dense(a) for a in arrays[1:]]
    x, w, y = (dense[i] for i in order[:3])
    b = dense[order[3]] if len(order) > 3 else None
    if x.shape[1] < MIN_CHANNELS[kind]:
        return False
    plan = _plan(kind, lib, x, w, y, b, stride, padding, dilation, groups)
    if plan is None:
        return False
    if kind == "fwd":
        plan.run(x, w, *([] if b is None else [b]), y)
    elif kind == "data":
        plan.run(y, w, x)
    else:
        plan.run(x, y, w)
    return True


def conv2d(out, x, w, stride, padding, dilation, groups):
    """out (N, O, oh, ow) = conv2d(x, w) on oneDNN, else conv_kernels.conv2d."""
    if not _run("fwd", _arrays(out, x, w), (1, 2, 0), stride, padding, dilation, groups):
        conv_kernels.conv2d(out, x, w, stride, padding, dilation, groups)


def conv2d_bias(out, x, w, b, stride, padding, dilation, groups):
    """out = conv2d(x, w) + b[:, None, None]: oneDNN adds the bias as it writes the output
    (one pass over it fewer); otherwise conv2d, then the backend's add."""
    if not _run("fwd", _arrays(out, x, w, b), (1, 2, 0, 3), stride, padding, dilation, groups):
        conv2d(out, x, w, stride, padding, dilation, groups)
        column = _v.as_strided(b, (1, b._sizes[0], 1, 1), (0, b._strides[0], 0, 0), b._offset)
        lookup("add", out._device)(out, out, column)


def conv_transpose2d(out, g, w, stride, padding, dilation, groups):
    """out (N, C, H, W) = conv2d's input gradient for output gradient g, on oneDNN if it can."""
    g = _pooled_dense(g)
    if not _run("data", _arrays(out, g, w), (0, 2, 1), stride, padding, dilation, groups):
        conv_kernels.conv_transpose2d(out, g, w, stride, padding, dilation, groups)


def conv2d_weight_grad(out, x, g, stride, padding, dilation, groups):
    """out (O, C/G, kh, kw) = conv2d's weight gradient, on oneDNN if it can."""
    x, g = _pooled_dense(x), _pooled_dense(g)
    if not _run("wgt", _arrays(out, x, g), (1, 0, 2), stride, padding, dilation, groups):
        conv_kernels.conv2d_weight_grad(out, x, g, stride, padding, dilation, groups)


def describe():
    """What runs conv2d and its gradients, for `tensorlib info`."""
    fallback = "OpenMP im2col + the BLAS's GEMM"
    if onednn.library() is None:
        return f"{fallback}; oneDNN {onednn.describe()}"
    return (f"{onednn.describe()} for float32 (not the input gradient below "
            f"{MIN_CHANNELS['data']} input channels, nor the weight gradient below "
            f"{MIN_CHANNELS['wgt']}); {fallback} otherwise")


KERNELS = {"conv2d": conv2d, "conv2d_bias": conv2d_bias,
           "conv2d_weight_grad": conv2d_weight_grad, "conv_transpose2d": conv_transpose2d}
