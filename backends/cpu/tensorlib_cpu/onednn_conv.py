"""2-D convolution (also with its bias added in the same pass) and its gradients on oneDNN,
for float32, with the im2col + GEMM kernels of conv_kernels as the fallback (other dtypes, no
oneDNN, TENSORLIB_ONEDNN=0, the few-channel gradients where im2col measured faster, or a case
oneDNN declines).

One plan per (op, sizes and strides of every tensor, stride, padding, dilation, groups) is
cached: the primitives and the reorders between the caller's layout (any non-negative
strides: NCHW, channels-last, a broadcast output gradient) and the ones oneDNN chose (format
`any`: its blocked layouts, whose kernels are the fast ones). `conv2d_backward` computes the
input, weight and bias gradients in one call, with the output gradient reordered once for
both convolutions. The other kernels have the dispatch table's signature ``kernel(out, x,
w_or_g, stride, padding, dilation, groups)``, as conv_kernels'."""
import ctypes

import numpy as np

from tensorlib._C import views as _v
from tensorlib._C.dispatch import lookup
from tensorlib._C.dtypes import float32
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import host_array
from tensorlib_cpu import conv_kernels, onednn
from tensorlib_cpu.onednn import Descriptor, Memory, Primitive
from tensorlib_cpu.onednn_exec import Executor

__all__ = ["KERNELS", "MIN_CHANNELS", "conv2d", "conv2d_backward", "conv2d_bias",
           "conv2d_weight_grad", "conv_transpose2d", "describe"]

# Plans kept (oldest dropped first): each holds a primitive, its reorders and descriptors.
CACHE_SIZE = 128
_plans = onednn.PlanCache(CACHE_SIZE)


def _dense(a):
    """a itself when it is C order or channels-last, else a C copy (the im2col kernels and a
    result's layout)."""
    if a.flags.c_contiguous or (a.ndim == 4 and a.transpose(0, 2, 3, 1).flags.c_contiguous):
        return a
    return np.ascontiguousarray(a)


def _readable(a):
    """Whether oneDNN can describe a float32 array as it is (no stride negative: any view,
    a broadcast output gradient's stride 0 included, is read by the reorder into oneDNN's
    own layout)."""
    return all(s >= 0 and s % 4 == 0 for s in a.strides)


def _pooled_dense(t):
    """t when its memory is dense (C order or channels-last), else a C-order copy in a tensor
    from the backend's memory pool. The output gradient of a convolution whose result was
    summed or averaged is a scalar expanded (stride 0); the im2col weight gradient copies it,
    and into fresh numpy memory each call those copies took ~1,000 page faults per 4 MiB
    (3,900 per forward+backward step of the 3->32 benchmark convolution, ~2 ms of a 4 ms step
    on the shared AMD EPYC). The pool hands the same pages back."""
    a = host_array(t)
    if a.size == 0 or _dense(a) is a:
        return t
    copy = empty(t._sizes, t._dtype, t._device)
    np.copyto(host_array(copy), a)
    return copy


def _layout(a):
    """(shape, element strides) of a float32 array; a size-1 dim gets the stride C order
    would give it (it is never stepped along), so that an unsqueezed input matches oneDNN's
    plain layout and is read in place."""
    shape, strides = tuple(a.shape), [s // 4 for s in a.strides]
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] == 1:
            strides[i] = strides[i + 1] * shape[i + 1] if i + 1 < len(shape) else 1
    return shape, tuple(strides)


def _weights_shape(w_shape, groups):
    if groups == 1:
        return tuple(w_shape)
    o = w_shape[0]
    return (groups, o // groups) + tuple(w_shape[1:])


def _weights_layout(w, groups):
    """A weight (O, C/G, kh, kw) as oneDNN's grouped (G, O/G, C/G, kh, kw) when groups > 1."""
    shape, strides = _layout(w)
    if groups == 1:
        return shape, strides
    return _weights_shape(shape, groups), (shape[0] // groups * strides[0],) + strides


def _geometry(x_shape, w_shape, y_shape, stride, padding, dilation):
    """oneDNN's strides, dilates (dilation - 1), left and right padding."""
    right = [(y_shape[2 + i] - 1) * stride[i] + (w_shape[2 + i] - 1) * dilation[i] + 1
             - x_shape[2 + i] - padding[i] for i in range(2)]
    return (onednn.dims(stride), onednn.dims([d - 1 for d in dilation]), onednn.dims(padding),
            onednn.dims(right))


# Scratch copies start on a cache line.
_ALIGN = 64


class _Plan:
    """Primitives run in order on one set of memories: the caller's arrays (its roles, in the
    order `run` takes them; the first `inputs` are read, the rest written) and scratch copies
    in the layouts the primitives chose, each filled by one reorder before the primitives run
    or copied back by one after. Two primitives that take a role in the same layout share its
    copy: the backward reorders the output gradient once for both gradients. The scratch is a
    tensor from the backend's memory pool per call (no fresh pages), and the per-call work is
    onednn_exec's, in C."""

    def __init__(self, lib, users, inputs):
        self.lib = lib
        self._users = users
        self._inputs = inputs
        self._copies = []            # (role, Memory, byte offset into the scratch)
        self._before, self._steps, self._after = [], [], []
        self.nbytes = 0
        self._executor = None

    def _memory(self, pd, role, query):
        user = self._users[role]
        if query is None:
            return user
        chosen = Memory.chosen(self.lib, pd, query)
        if chosen.same_as(user):
            return user
        for r, copy, _ in self._copies:
            if r == role and copy.same_as(chosen):
                return copy
        self._copies.append((role, chosen, self.nbytes))
        self.nbytes += -(-chosen.nbytes // _ALIGN) * _ALIGN
        if role < self._inputs:
            self._before.append(Primitive.reorder(self.lib, user, chosen))
        else:
            self._after.append(Primitive.reorder(self.lib, chosen, user))
        return chosen

    def add(self, pd, args):
        """One primitive from descriptor pd (destroyed here). args: (argument id, role,
        query for the layout pd chose, or None: the caller's own)."""
        try:
            bound = [(arg, self._memory(pd, role, query)) for arg, role, query in args]
        except Exception:
            self.lib.primitive_desc_destroy(pd)
            raise
        self._steps.append(Primitive(self.lib, pd, bound))

    def impls(self):
        """The implementation oneDNN chose for each primitive (reorders excluded)."""
        return [step.impl for step in self._steps]

    def reorders(self):
        """(reorders before, reorders after) the primitives."""
        return len(self._before), len(self._after)

    def run(self, arrays, device):
        """arrays: one per role, in order."""
        if self._executor is None:
            steps = self._before + self._steps + self._after
            self._executor = Executor(
                self.lib.run_functions, self.lib.stream.value,
                [m.handle.value for m in self._users], [(m.handle.value, offset)
                                                        for _, m, offset in self._copies],
                [step.step() for step in steps], (self._users, self._copies, steps))
        scratch = (empty(((self.nbytes + _ALIGN + 3) // 4,), float32, device)
                   if self.nbytes else None)
        with self.lib.lock:
            self._executor.run(arrays, None if scratch is None else host_array(scratch),
                               self.lib.threads())


def _descriptors(lib, x_shape, w_shape, y_shape, groups):
    """Format `any` for the input, weight and output: oneDNN's blocked layouts (nChw8c on
    AVX2). Measured against the caller's own NCHW layout on one thread: 0.5-0.9x the time
    for every op of the two benchmark convolutions, reorders included."""
    return (Descriptor.any(lib, x_shape), Descriptor.any(lib, _weights_shape(w_shape, groups)),
            Descriptor.any(lib, y_shape))


def _forward_pd(lib, shapes, bias_md, groups, geometry):
    """The training forward descriptor (also the hint of the backward descriptors)."""
    src, wgt, dst = _descriptors(lib, *shapes, groups)
    pd = ctypes.c_void_p()
    lib.call("convolution_forward_primitive_desc_create", ctypes.byref(pd), lib.engine,
             onednn.FORWARD_TRAINING, onednn.CONVOLUTION_DIRECT, src.md, wgt.md, bias_md,
             dst.md, *geometry, None)
    return pd


def _users(lib, named, groups):
    """The caller's Memory per present array of (name, array) pairs, and each name's role."""
    users, roles = [], {}
    for name, a in named:
        if a is not None:
            roles[name] = len(users)
            layout = _weights_layout(a, groups) if name in ("w", "gw") else _layout(a)
            users.append(Memory.strided(lib, *layout))
    return users, roles


def _make_forward(lib, x, w, b, y, stride, padding, dilation, groups):
    """y = conv2d(x, w) (+ b): roles x, w, (b), y."""
    users, roles = _users(lib, [("x", x), ("w", w), ("b", b), ("y", y)], groups)
    plan = _Plan(lib, users, len(users) - 1)
    geometry = _geometry(x.shape, w.shape, y.shape, stride, padding, dilation)
    pd = _forward_pd(lib, (x.shape, w.shape, y.shape),
                     None if b is None else users[roles["b"]].md, groups, geometry)
    args = [(onednn.ARG_SRC, roles["x"], onednn.QUERY_SRC_MD),
            (onednn.ARG_WEIGHTS, roles["w"], onednn.QUERY_WEIGHTS_MD)]
    if b is not None:
        args.append((onednn.ARG_BIAS, roles["b"], None))
    plan.add(pd, args + [(onednn.ARG_DST, roles["y"], onednn.QUERY_DST_MD)])
    return plan


def _make_backward(lib, shapes, g, w, x, gx, gw, stride, padding, dilation, groups):
    """The gradients of y = conv2d(x, w) for output gradient g: gx (needs w) and gw (needs x);
    roles g, (w), (x), then (gx), (gw). Both primitives read g in the same blocked layout, so
    it is reordered once. The bias gradient is not taken here: oneDNN's, summed inside the
    weight gradient's pass, cost 0.24-0.71 ms more on the two benchmark convolutions (one
    thread, AMD EPYC), where the backend's sum takes 0.09-0.21 ms (see _bias_grad)."""
    users, roles = _users(lib, [("g", g), ("w", w), ("x", x), ("gx", gx), ("gw", gw)], groups)
    plan = _Plan(lib, users, sum(name in roles for name in ("g", "w", "x")))
    geometry = _geometry(*shapes, stride, padding, dilation)
    fwd = _forward_pd(lib, shapes, None, groups, geometry)
    try:
        if gx is not None:
            src, wgt, dst = _descriptors(lib, *shapes, groups)
            pd = ctypes.c_void_p()
            lib.call("convolution_backward_data_primitive_desc_create", ctypes.byref(pd),
                     lib.engine, onednn.CONVOLUTION_DIRECT, src.md, wgt.md, dst.md, *geometry,
                     fwd, None)
            plan.add(pd, [(onednn.ARG_DIFF_DST, roles["g"], onednn.QUERY_DIFF_DST_MD),
                          (onednn.ARG_WEIGHTS, roles["w"], onednn.QUERY_WEIGHTS_MD),
                          (onednn.ARG_DIFF_SRC, roles["gx"], onednn.QUERY_DIFF_SRC_MD)])
        if gw is not None:
            src, wgt, dst = _descriptors(lib, *shapes, groups)
            pd = ctypes.c_void_p()
            lib.call("convolution_backward_weights_primitive_desc_create", ctypes.byref(pd),
                     lib.engine, onednn.CONVOLUTION_DIRECT, src.md, wgt.md, None, dst.md,
                     *geometry, fwd, None)
            plan.add(pd, [(onednn.ARG_SRC, roles["x"], onednn.QUERY_SRC_MD),
                          (onednn.ARG_DIFF_DST, roles["g"], onednn.QUERY_DIFF_DST_MD),
                          (onednn.ARG_DIFF_WEIGHTS, roles["gw"],
                           onednn.QUERY_DIFF_WEIGHTS_MD)])
    finally:
        lib.primitive_desc_destroy(fwd)
    return plan


def _signature(t):
    """What a plan depends on of a tensor (None: absent): its sizes and element strides."""
    return None if t is None else (t._sizes, t._strides)


def _cached(key, build):
    """The plan for key, built on first use by build() (None where oneDNN should not or
    cannot run the case: then the caller falls back, and the answer is cached too)."""
    return _plans.plan(key, build, onednn.library().threads())


def _eligible(results, operands):
    """Whether oneDNN takes these host arrays: all float32 and non-empty, the results dense
    (C order or channels-last), the operands readable in place (see _readable)."""
    arrays = results + operands
    return (all(a.dtype == np.float32 and a.size for a in arrays)
            and all(_dense(a) is a for a in results)
            and all(_readable(a) for a in operands))


# Input channels below which im2col stays faster than oneDNN for a gradient. Measured on one
# thread (AMD EPYC Zen 3, AVX2): with 1 or 3 channels oneDNN's input gradient took 1.5-5.5x
# the time of col2im (the channels are padded to a block of 8 and reordered), with 6 it took
# 0.8x; with 1 channel its weight gradient took 2.6x our direct kernel's, with 3 0.1-0.2x.
# Forward convolutions took 0.06-0.9x im2col's time on every case tried (depthwise, 1x1,
# strided, 1-64 channels), so they go to oneDNN, except those with few input channels that
# conv_kernels' direct kernel takes first (0.6-0.85x oneDNN's time, one thread).
MIN_CHANNELS = {"fwd": 1, "data": 4, "wgt": 2}


def _forward_on_onednn(out, x, w, b, stride, padding, dilation, groups):
    """out = conv2d(x, w) (+ b) on oneDNN; False when it cannot (the caller falls back).
    A cached plan is found from the tensors' sizes and strides alone, before any array is
    looked at: the checks ran when it was made."""
    lib = onednn.library()
    if lib is None:
        return False
    key = ("fwd", x._dtype, _signature(x), _signature(w), _signature(b), _signature(out),
           tuple(stride), tuple(padding), tuple(dilation), groups)
    # the bias dense: the convolution reads a strided bias memory as if it were dense
    bias = () if b is None else (np.ascontiguousarray(host_array(b)),)
    arrays = (host_array(x), host_array(w)) + bias + (host_array(out),)

    def build():
        if not _eligible(arrays[-1:], arrays[:-1]):
            return None
        return _make_forward(lib, arrays[0], arrays[1], None if b is None else arrays[2],
                             arrays[-1], stride, padding, dilation, groups)
    plan = _cached(key, build)
    if plan is None:
        return False
    plan.run(arrays, out._device)
    return True


def _backward_on_onednn(gx, gw, x, g, w, stride, padding, dilation, groups):
    """The gradients (either may be None) that oneDNN should compute, computed there: returns
    which of (gx, gw) it wrote. g may have any strides (a summed output's gradient is a
    broadcast scalar): the reorder into oneDNN's layout reads it as it is, with no copy."""
    lib = onednn.library()
    if lib is None:
        return False, False
    channels = (gx if gx is not None else x)._sizes[1]
    if channels < MIN_CHANNELS["data"]:
        gx = None
    if channels < MIN_CHANNELS["wgt"]:
        gw = None
    if gx is None and gw is None:
        return False, False
    w = w if gx is not None else None
    x = x if gw is not None else None
    key = ("bwd", g._dtype, _signature(g), _signature(w), _signature(x), _signature(gx),
           _signature(gw), tuple(stride), tuple(padding), tuple(dilation), groups)
    ga, wa, xa, gxa, gwa = (None if t is None else host_array(t) for t in (g, w, x, gx, gw))
    operands = tuple(a for a in (ga, wa, xa) if a is not None)
    results = tuple(a for a in (gxa, gwa) if a is not None)

    def build():
        if not _eligible(results, operands):
            return None
        shapes = ((gxa if gxa is not None else xa).shape,
                  (gwa if gwa is not None else wa).shape, ga.shape)
        return _make_backward(lib, shapes, ga, wa, xa, gxa, gwa, stride, padding, dilation,
                              groups)
    plan = _cached(key, build)
    if plan is None:
        return False, False
    plan.run(operands + results, g._device)
    return gx is not None, gw is not None


def _bias_grad(out, g):
    """out (O,) = g summed over the batch and space, by the backend's sum kernel (what
    g.sum((0, 2, 3)) runs). Over the dims where g is broadcast (stride 0: a summed or
    averaged output's gradient is one scalar everywhere) the sum is a product by their
    size (float32 and float64): one rounding instead of one per term, and no pass over the
    broadcast."""
    repeated = 1
    if host_array(out).dtype in (np.float32, np.float64):
        sizes, strides = g._sizes, g._strides
        for d in (0, 2, 3):
            if strides[d] == 0 and sizes[d] > 1:
                repeated *= sizes[d]
                g = _v.narrow(g, d, 0, 1)
    o, s = out._sizes[0], out._strides[0]
    target = _v.as_strided(out, (1, o, 1, 1), (o * s, s, s, s), out._offset)
    lookup("sum", g._device)(target, g, (0, 2, 3))
    if repeated > 1:
        a = host_array(out)
        np.multiply(a, repeated, out=a)


def _winograd_first(grad=False):
    """Whether Winograd runs before oneDNN for a forward (or an input gradient): always
    without oneDNN, else per CPU and build (conv_kernels.WINOGRAD_*_BEFORE_ONEDNN)."""
    before = (conv_kernels.WINOGRAD_GRAD_BEFORE_ONEDNN if grad
              else conv_kernels.WINOGRAD_FORWARD_BEFORE_ONEDNN)
    return before or onednn.library() is None


def _own_forward(out, x, w, b, stride, padding, dilation, groups):
    """out = conv2d(x, w) (+ b) on conv_kernels' own float32 kernels where they beat oneDNN:
    the direct kernel for few input channels, Winograd F(2x2, 3x3) for 3x3 stride-1
    convolutions with many channels where it goes first (_winograd_first); whether one
    ran."""
    return (conv_kernels.conv2d_direct(out, x, w, b, stride, padding, dilation, groups)
            or (_winograd_first() and conv_kernels.conv2d_winograd(
                out, x, w, b, stride, padding, dilation, groups)))


def conv2d(out, x, w, stride, padding, dilation, groups):
    """out (N, O, oh, ow) = conv2d(x, w): conv_kernels' direct or Winograd kernel where
    they take the case, else oneDNN, else conv_kernels.conv2d."""
    if _own_forward(out, x, w, None, stride, padding, dilation, groups):
        return
    if not _forward_on_onednn(out, x, w, None, stride, padding, dilation, groups):
        conv_kernels.conv2d(out, x, w, stride, padding, dilation, groups)


def conv2d_bias(out, x, w, b, stride, padding, dilation, groups):
    """out = conv2d(x, w) + b[:, None, None]: oneDNN adds the bias as it writes the output
    (one pass over it fewer), as do conv_kernels' direct and Winograd kernels (which run
    first); otherwise conv2d, then the backend's add."""
    if _own_forward(out, x, w, b, stride, padding, dilation, groups):
        return
    if not _forward_on_onednn(out, x, w, b, stride, padding, dilation, groups):
        conv2d(out, x, w, stride, padding, dilation, groups)
        column = _v.as_strided(b, (1, b._sizes[0], 1, 1), (0, b._strides[0], 0, 0), b._offset)
        lookup("add", out._device)(out, out, column)


def conv2d_backward(grad_x, grad_w, grad_b, x, g, w, stride, padding, dilation, groups):
    """The input, weight and bias gradients of conv2d for output gradient g, each output
    None when not wanted, in one call: on oneDNN the output gradient is read into its layout
    once for both convolutions (a broadcast one with no copy); what stays on im2col (few
    input channels, other dtypes, no oneDNN) reads g as it is for the input gradient and
    through a pooled dense copy for the weight gradient. The input gradient of a 3x3
    stride-1 convolution with many channels runs on conv_kernels' Winograd kernel first
    where it goes first for input gradients (_winograd_first)."""
    early_x = (grad_x is not None and _winograd_first(grad=True)
               and conv_kernels.conv_transpose2d_winograd(grad_x, g, w, stride, padding,
                                                          dilation, groups))
    done_x, done_w = _backward_on_onednn(None if early_x else grad_x, grad_w, x, g, w, stride,
                                         padding, dilation, groups)
    done_x = done_x or early_x
    if grad_x is not None and not done_x:
        conv_kernels.conv_transpose2d(grad_x, g, w, stride, padding, dilation, groups)
    if grad_w is not None and not done_w:
        conv_kernels.conv2d_weight_grad(grad_w, _pooled_dense(x), _pooled_dense(g), stride,
                                        padding, dilation, groups)
    if grad_b is not None:
        _bias_grad(grad_b, g)


def conv_transpose2d(out, g, w, stride, padding, dilation, groups):
    """out (N, C, H, W) = conv2d's input gradient for output gradient g: Winograd where it
    takes the case, else oneDNN if it can, else col2im."""
    if _winograd_first(grad=True) and conv_kernels.conv_transpose2d_winograd(
            out, g, w, stride, padding, dilation, groups):
        return
    if not _backward_on_onednn(out, None, None, g, w, stride, padding, dilation, groups)[0]:
        conv_kernels.conv_transpose2d(out, g, w, stride, padding, dilation, groups)


def conv2d_weight_grad(out, x, g, stride, padding, dilation, groups):
    """out (O, C/G, kh, kw) = conv2d's weight gradient, on oneDNN if it can."""
    if not _backward_on_onednn(None, out, x, g, None, stride, padding, dilation, groups)[1]:
        conv_kernels.conv2d_weight_grad(out, _pooled_dense(x), _pooled_dense(g), stride,
                                        padding, dilation, groups)


def describe():
    """What runs conv2d and its gradients, for `tensorlib info`."""
    fallback = "OpenMP im2col + the BLAS's GEMM"
    direct = (f"the float32 forward with at most {conv_kernels.DIRECT_FWD_MAX_CHANNELS} input "
              f"channels per group: a direct {conv_kernels.DIRECT_CONV_WIDTH * 32}-bit kernel; "
              if conv_kernels.DIRECT_CONV_AVAILABLE else "")
    if conv_kernels.WINOGRAD_AVAILABLE and (_winograd_first() or _winograd_first(grad=True)):
        what = " and ".join(name for name, grad in (("forwards", False), ("input gradients", True))
                            if _winograd_first(grad))
        width = "512" if conv_kernels.WINOGRAD_512_BIT else "256"
        direct += (f"float32 3x3 stride-1 {what} with at least "
                   f"{conv_kernels.WINOGRAD_MIN_CHANNELS} input and output channels: Winograd "
                   f"F(2x2, 3x3) ({width}-bit products; off with TENSORLIB_WINOGRAD=0); ")
    elif conv_kernels.WINOGRAD_AVAILABLE:
        direct += ("not Winograd F(2x2, 3x3): oneDNN ran faster on full-width AVX-512 "
                   "(TENSORLIB_WINOGRAD=1 puts it first); ")
    if onednn.library() is None:
        return f"{direct}{fallback}; oneDNN {onednn.describe()}"
    return (f"{direct}{onednn.describe()} for float32 (not the input gradient below "
            f"{MIN_CHANNELS['data']} input channels, nor the weight gradient below "
            f"{MIN_CHANNELS['wgt']}); {fallback} otherwise")


KERNELS = {"conv2d": conv2d, "conv2d_bias": conv2d_bias, "conv2d_backward": conv2d_backward,
           "conv2d_weight_grad": conv2d_weight_grad, "conv_transpose2d": conv_transpose2d}
