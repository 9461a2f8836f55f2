r"""nn.functional: pooling (max, average, adaptive, lp, max-unpool).

NOTE [ Pooling by gathered windows ]
Max pooling gathers every window of the input with two (or one, or three) `index_select`s,
one per spatial dim, through a table of input positions pos[o, j] = o * stride - padding +
j * dilation (positions outside the input are clamped, then masked to -inf), so that the
windows are the last dim of a (N, C, *out, prod(kernel)) tensor; `argmax` over it gives the
winner, whose flat input position (PyTorch's `indices`) comes from the same tables. The same
machinery serves adaptive max pooling, whose windows [floor(o L / O), ceil((o + 1) L / O))
vary in length (shorter ones are masked). The tables are device tensors made by ops once per
geometry (`_index_tables`); a backend's fused kernel takes them instead. The op `max_pool` is
one `@differentiable` node: its gradient sends each output's gradient to the input element
that won (ties to the first, as PyTorch), by a scatter-add at the returned indices.

Average pooling is a depthwise convolution with a kernel of ones (so it uses a backend's conv
kernel when there is one) times 1 / divisor, the divisor per output position (count_include_pad,
ceil_mode windows clipped at the padded edge, divisor_override) one number when it is the same
everywhere, else a cached device table. Adaptive average pooling is separable: one small
averaging matrix per spatial dim, applied by matmul. Everything but max pooling is composed
from differentiable ops.
"""
import math

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.autograd.recording import formula
from tensorlib.nn._functional._index_tables import (adaptive_windows, cached,
                                                     gather_plan, regular_windows)
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._opdef import differentiable
from tensorlib.ops._autocast import autocast_op
from tensorlib.ops.memory_format import contiguous_in, in_layout_of_inputs, suggest

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d",
           "max_unpool1d", "max_unpool2d", "max_unpool3d"]


# ---- helpers -------------------------------------------------------------------------------
def _tuple(value, n, name):
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            value = tuple(value) * n
        if len(value) != n:
            raise RuntimeError(f"{name} must either be a single int, or a tuple of {n} ints")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _check_input(name, input, nd):  # noqa: A002
    if not isinstance(input, TensorImpl):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor for "
                           f"input, but got: {list(input.shape)}")
    if any(s == 0 for s in input.shape[input.dim() - nd:]) or (
            input.dim() == nd + 2 and input.shape[1] == 0):
        raise RuntimeError(f"{name}: Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {list(input.shape)}")


def _batched(input, nd):  # noqa: A002
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    return input, False


def _pool_out(size, k, pad, s, d, ceil_mode):
    """PyTorch's pooling_output_shape."""
    num = size + 2 * pad - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + pad:
        out -= 1
    return out


def _pool_params(name, nd, kernel_size, stride, padding, dilation):
    kernel = _tuple(kernel_size, nd, "kernel_size")
    stride = kernel if (stride is None or (isinstance(stride, (list, tuple))
                                           and len(stride) == 0)) \
        else _tuple(stride, nd, "stride")
    padding = _tuple(padding, nd, "padding")
    dilation = _tuple(dilation, nd, "dilation")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got "
                           f"{', '.join(f'k{i}: {k}' for i, k in enumerate(kernel))}")
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should not be zero" if any(s == 0 for s in stride)
                           else "stride should be greater than zero")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if any(p < 0 for p in padding):
        raise RuntimeError("pad must be non-negative")
    for k, p, d in zip(kernel, padding, dilation):
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    return kernel, stride, padding, dilation


def _out_sizes(x, nd, kernel, stride, padding, dilation, ceil_mode):
    sp = x.shape[2:]
    out = tuple(_pool_out(sp[i], kernel[i], padding[i], stride[i], dilation[i], ceil_mode)
                for i in range(nd))
    if any(o < 1 for o in out):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x.shape[1:]))}). Calculated "
                           f"output size: ({'x'.join(map(str, (x.shape[1],) + out))}). Output "
                           f"size is too small")
    return out


# ---- max pooling (NOTE [ Pooling by gathered windows ]) -------------------------------------
@differentiable("max_pool")
def _max_pool(x, windows):
    """x (N, C, *S); windows: one `_index_tables.Windows` per spatial dim. Returns (values
    (N, C, *O), flat indices into prod(S))."""
    dev = x.device
    outs = tuple(w.positions.shape[0] for w in windows)
    n, c = x.shape[:2]
    kernel = optional_kernel(x._device, "max_pool")       # a backend's fused pooling, if any
    # a window wholly in the padding is -inf (PyTorch's); the fused kernels assume none is
    if kernel is not None and not any(w.any_empty for w in windows):
        values = tensorlib.empty((n, c) + outs, dtype=x.dtype, device=dev)
        indices = tensorlib.empty((n, c) + outs, dtype=tensorlib.int64, device=dev)
        if kernel(values, indices, x.contiguous(), tuple(w.positions for w in windows)):
            return values, indices
    nd = len(windows)
    clamped, valid, flat = gather_plan(windows)
    win = x
    for i, idx in enumerate(clamped):
        win = tensorlib.index_select(win, 2 + i, idx)
    ks = tuple(w.positions.shape[1] for w in windows)
    # (N, C, O1, k1, O2, k2, ...) -> (N, C, O1, O2, ..., k1 * k2 * ...)
    interleaved = [v for pair in zip(outs, ks) for v in pair]
    win = win.reshape((n, c) + tuple(interleaved))
    order = (0, 1) + tuple(2 + 2 * i for i in range(nd)) + tuple(3 + 2 * i for i in range(nd))
    win = win.permute(order).reshape((n, c) + outs + (flat.shape[-1],))
    if valid is not None:
        fill = float("-inf") if x.dtype.is_floating_point else _lowest(x.dtype)
        win = tensorlib.where(valid, win, tensorlib.tensor(fill, dtype=x.dtype, device=dev))
    local = tensorlib.argmax(win, -1, keepdim=True)
    values = tensorlib.gather(win, -1, local).squeeze(-1)
    indices = tensorlib.gather(flat.expand((n, c) + flat.shape), -1, local).squeeze(-1)
    return values, indices


def _lowest(dtype):
    return int(tensorlib.iinfo(dtype).min) if hasattr(tensorlib, "iinfo") else -(1 << 62)


@formula("max_pool", save_output=True)
def _max_pool_grad(ctx, g, g_indices=None):
    return _max_pool_backward(g, ctx.out[1], ctx.args[0].shape, ctx.args[1]), None


@differentiable("max_pool_backward")
def _max_pool_backward(g, indices, in_shape, windows):
    """zeros(in_shape) with each output gradient added at its maximum's position (indices:
    flat per (N, C) plane). A backend's fused kernel if any (given, per dim, the windows that
    hold each input position, so it can work per input element), else one flat scatter-add."""
    kernel = optional_kernel(g._device, "max_pool_backward")
    if kernel is not None:
        out = tensorlib.empty(tuple(in_shape), dtype=g.dtype, device=g.device)
        if kernel(out, g.contiguous(), indices.contiguous(), tuple(w.cover() for w in windows)):
            return out
    n, c = in_shape[:2]
    plane = math.prod(in_shape[2:])
    offsets = tensorlib.arange(n * c, device=g.device).reshape((n, c) + (1,) * (g.dim() - 2))
    flat = indices + offsets * plane
    return tensorlib.ops.indexing.index_add_flat(g, flat, tuple(in_shape))


@formula("max_pool_backward", save=(1,))
def _max_pool_backward_grad(ctx, gg):
    """Linear in g: its gradient reads gg back at the same positions."""
    g, indices, in_shape, _ = ctx.args
    n, c = in_shape[:2]
    planes = gg.reshape(n * c, -1)
    picked = planes.gather(1, indices.reshape(n * c, -1))
    return picked.reshape(g.shape), None, None, None


def _max_pool_nd(nd, name, input, kernel_size, stride, padding, dilation, ceil_mode):  # noqa
    _check_input(name, input, nd)
    kernel, stride, padding, dilation = _pool_params(name, nd, kernel_size, stride, padding,
                                                     dilation)
    x, unbatched = _batched(input, nd)
    outs = _out_sizes(x, nd, kernel, stride, padding, dilation, ceil_mode)
    windows = tuple(regular_windows(x.shape[2 + i], outs[i], kernel[i], stride[i], padding[i],
                                    dilation[i], x._device) for i in range(nd))
    values, indices = _max_pool(x, windows)
    if unbatched:
        return values.squeeze(0), indices.squeeze(0)
    return in_layout_of_inputs(values, x), in_layout_of_inputs(indices, x)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa
                            ceil_mode=False, return_indices=False):
    return _max_pool_nd(1, "max_pool1d", input, kernel_size, stride, padding, dilation,
                        ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa
                            ceil_mode=False, return_indices=False):
    return _max_pool_nd(2, "max_pool2d", input, kernel_size, stride, padding, dilation,
                        ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa
                            ceil_mode=False, return_indices=False):
    return _max_pool_nd(3, "max_pool3d", input, kernel_size, stride, padding, dilation,
                        ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa
               return_indices=False):
    r"""1-D max pooling over (N, C, L) or (C, L); padding counts as -inf; stride defaults to
    kernel_size. With return_indices, also the position of each max in L."""
    out = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa
               return_indices=False):
    r"""2-D max pooling over (N, C, H, W) or (C, H, W). Output size per dim:
    floor_or_ceil((L + 2p - d (k - 1) - 1) / s) + 1 (a last window starting in the right
    padding is dropped in ceil_mode). With return_indices, also each max's flat position in
    H * W (for max_unpool2d)."""
    out = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


@autocast_op("max_pool3d")
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa
               return_indices=False):
    r"""3-D max pooling over (N, C, D, H, W) or (C, D, H, W)."""
    out = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


# ---- average pooling ----------------------------------------------------------------------
def _avg_divisor(size, out, k, s, p, count_include_pad, o):
    """The divisor of each output position o along one dim (PyTorch's avg_pool arithmetic):
    the window clipped at the padded edge, or (count_include_pad=False) at the input's. Works
    on Python ints and on int64 tensors alike."""
    start = o * s - p
    end = tensorlib.minimum(start + k, size + p) if isinstance(o, TensorImpl) \
        else min(start + k, size + p)
    if count_include_pad:
        return end - start
    if isinstance(o, TensorImpl):
        return tensorlib.clamp(end, max=size) - tensorlib.clamp(start, min=0)
    return min(end, size) - max(start, 0)


def _avg_reciprocal(sizes, outs, kernel, stride, padding, count_include_pad, x):
    """1 / divisor over the output grid, or a float divisor when it is one number everywhere
    (both cached per geometry)."""
    args = tuple(zip(sizes, outs, kernel, stride, padding))

    def build():
        per_dim = [{_avg_divisor(*a, count_include_pad, o) for o in range(a[1])} for a in args]
        if all(len(d) == 1 for d in per_dim):
            return float(math.prod(d.pop() for d in per_dim))
        div = 1
        for i, a in enumerate(args):
            shape = [1] * len(args)
            shape[i] = a[1]
            o = tensorlib.arange(a[1], dtype=tensorlib.int64, device=x.device)
            div = div * _avg_divisor(*a, count_include_pad, o).reshape(shape)
        # in float32 at least: a 16-bit float need not hold the divisor (3375) exactly
        wide = x.dtype if x.dtype.itemsize >= 4 else tensorlib.float32
        return (1.0 / div.to(wide)).to(x.dtype)
    return cached(("avg_div", args, count_include_pad, x._device, x.dtype), build)


def _avg_pool_nd(nd, name, input, kernel_size, stride, padding, ceil_mode,  # noqa: A002
                 count_include_pad, divisor_override):
    _check_input(name, input, nd)
    kernel = _tuple(kernel_size, nd, "kernel_size")
    stride = kernel if (stride is None or (isinstance(stride, (list, tuple))
                                           and len(stride) == 0)) \
        else _tuple(stride, nd, "stride")
    padding = _tuple(padding, nd, "padding")
    if any(k <= 0 for k in kernel):
        raise RuntimeError("kernel size should be greater than zero")
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should not be zero" if any(s == 0 for s in stride)
                           else "stride should be greater than zero")
    if any(p < 0 for p in padding):
        raise RuntimeError("pad must be non-negative")
    for k, p in zip(kernel, padding):
        if p > k // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation=1")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x, unbatched = _batched(input, nd)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"\"{name}\" not implemented for '{x.dtype.name}'")
    outs = _out_sizes(x, nd, kernel, stride, padding, (1,) * nd, ceil_mode)
    sp = x.shape[2:]
    n, c = x.shape[:2]
    # zero padding, with extra on the right for ceil_mode windows that run past it
    pads = []
    for i in reversed(range(nd)):
        need = (outs[i] - 1) * stride[i] + kernel[i] - (sp[i] + 2 * padding[i])
        pads += [padding[i], padding[i] + max(need, 0)]
    xp = x.reshape((n * c, 1) + tuple(sp))
    if any(pads):
        xp = tensorlib.ops.joining.pad(xp, pads)
    from tensorlib.nn._functional.conv import _ops
    ones = tensorlib.ones((1, 1) + kernel, dtype=x.dtype, device=x.device)
    summed = _ops(nd)[0](xp, ones, stride, (0,) * nd, (1,) * nd, 1)
    summed = summed.reshape((n, c) + outs)
    if divisor_override is not None:
        out = summed / divisor_override
    else:
        recip = _avg_reciprocal(sp, outs, kernel, stride, padding, count_include_pad, x)
        out = summed / recip if isinstance(recip, float) else summed * recip
    return out.squeeze(0) if unbatched else in_layout_of_inputs(out, x)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True):
    r"""1-D average pooling over (N, C, L) or (C, L); stride defaults to kernel_size."""
    return _avg_pool_nd(1, "avg_pool1d", input, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True, divisor_override=None):
    r"""2-D average pooling over (N, C, H, W) or (C, H, W). count_include_pad: zero padding
    counts in the divisor; divisor_override: divide by this instead."""
    return _avg_pool_nd(2, "avg_pool2d", input, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override)


@autocast_op("avg_pool3d")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True, divisor_override=None):
    r"""3-D average pooling over (N, C, D, H, W) or (C, D, H, W)."""
    k = _tuple(kernel_size, 3, "kernel_size")
    if input.dim() >= 4 and any(n < kk for n, kk in zip(input.shape[-3:], k)):
        # PyTorch's CPU avg_pool3d wants the unpadded input to hold a window
        t, h, w = input.shape[-3:]
        raise RuntimeError(f"input image (T: {t} H: {h} W: {w}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    return _avg_pool_nd(3, "avg_pool3d", input, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    r"""(sum over each window of x^p)^(1/p), as PyTorch (sign(s) relu(|s|) ** (1/p))."""
    k = _tuple(kernel_size, 1, "kernel_size")
    out = avg_pool1d(input.pow(norm_type), k, stride, 0, ceil_mode)
    return (tensorlib.sign(out) * tensorlib.relu(tensorlib.abs(out))).mul(k[0]).pow(
        1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    kh, kw = _tuple(kernel_size, 2, "kernel_size")
    out = avg_pool2d(input.pow(norm_type), (kh, kw), stride, 0, ceil_mode)
    return (tensorlib.sign(out) * tensorlib.relu(tensorlib.abs(out))).mul(kh * kw).pow(
        1.0 / norm_type)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    kd, kh, kw = _tuple(kernel_size, 3, "kernel_size")
    out = avg_pool3d(input.pow(norm_type), (kd, kh, kw), stride, 0, ceil_mode)
    return (tensorlib.sign(out) * tensorlib.relu(tensorlib.abs(out))).mul(kd * kh * kw).pow(
        1.0 / norm_type)


# ---- adaptive pooling -------------------------------------------------------------------------
def _adaptive_sizes(name, input, nd, output_size):  # noqa: A002
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != nd:
            raise RuntimeError(f"{name}: output_size must be {nd}")
        sizes = tuple(input.shape[input.dim() - nd + i] if s is None else int(s)
                      for i, s in enumerate(output_size))
    else:
        if output_size is None:
            sizes = tuple(input.shape[input.dim() - nd:])
        else:
            sizes = (int(output_size),) * nd
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to "
                           f"0 but received {list(sizes)}")
    return sizes


def _check_adaptive_input(name, input, nd):  # noqa: A002
    if not isinstance(input, TensorImpl):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(input.shape)}")
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")


def _adaptive_matrix(size, out, x):
    """(size, out): column o averages its window [floor(o L / O), ceil((o + 1) L / O))."""
    def build():
        windows = adaptive_windows(size, out, x._device).positions      # (out, kmax)
        p = tensorlib.arange(size, dtype=tensorlib.int64, device=x.device).reshape(-1, 1, 1)
        inside = (windows == p).any(-1)                                  # (size, out)
        wide = x.dtype if x.dtype.itemsize >= 4 else tensorlib.float32
        count = (windows >= 0).sum(-1).to(wide)
        return tensorlib.where(inside, 1.0 / count, 0.0).to(x.dtype)
    return cached(("adaptive_avg", size, out, x._device, x.dtype), build)


def _adaptive_avg(nd, name, input, output_size):  # noqa: A002
    _check_adaptive_input(name, input, nd)
    outs = _adaptive_sizes(name, input, nd, output_size)
    if all(o == 1 for o in outs) and input.dtype.is_floating_point:
        # global average pooling (a classifier's head): one mean, not a product per dim
        dims = tuple(range(input.dim() - nd, input.dim()))
        return contiguous_in(input.mean(dims, keepdim=True), suggest(input))
    x = input
    for i in range(nd):
        axis = x.dim() - nd + i
        size = x.shape[axis]
        if outs[i] == size:
            continue
        a = _adaptive_matrix(size, outs[i], x)
        x = tensorlib.matmul(x.transpose(axis, -1), a).transpose(axis, -1)
    # the input's layout (channels-last stays so, as PyTorch's), in one copy at most
    return contiguous_in(x if x is not input else x.clone(), suggest(input))


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    r"""Average over windows [floor(o L / O), ceil((o + 1) L / O)) for each output o."""
    return _adaptive_avg(1, "adaptive_avg_pool1d", input, output_size)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    r"""Adaptive average pooling to output_size (int, or pair; None keeps the input size)."""
    return _adaptive_avg(2, "adaptive_avg_pool2d", input, output_size)


@autocast_op("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input, output_size):  # noqa: A002
    return _adaptive_avg(3, "adaptive_avg_pool3d", input, output_size)


def _adaptive_max(nd, name, input, output_size):  # noqa: A002
    _check_adaptive_input(name, input, nd)
    outs = _adaptive_sizes(name, input, nd, output_size)
    x, unbatched = _batched(input, nd)
    if any(o == 0 for o in outs):
        raise RuntimeError(f"{name}(): output_size must be positive, got {list(outs)}")
    windows = tuple(adaptive_windows(x.shape[2 + i], outs[i], x._device) for i in range(nd))
    values, indices = _max_pool(x, windows)
    if unbatched:
        return values.squeeze(0), indices.squeeze(0)
    return in_layout_of_inputs(values, x), in_layout_of_inputs(indices, x)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    return _adaptive_max(1, "adaptive_max_pool1d", input, output_size)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    return _adaptive_max(2, "adaptive_max_pool2d", input, output_size)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    return _adaptive_max(3, "adaptive_max_pool3d", input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices=False):  # noqa: A002
    r"""Max over adaptive windows; with return_indices also each max's position."""
    out = _adaptive_max(1, "adaptive_max_pool1d", input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    out = _adaptive_max(2, "adaptive_max_pool2d", input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):  # noqa: A002
    out = _adaptive_max(3, "adaptive_max_pool3d", input, output_size)
    return out if return_indices else out[0]


# ---- max unpooling --------------------------------------------------------------------------
def _unpool_output_size(input, nd, kernel, stride, padding, output_size):  # noqa: A002
    default = [(input.shape[input.dim() - nd + i] - 1) * stride[i] + kernel[i] - 2 * padding[i]
               for i in range(nd)]
    if output_size is None:
        return tuple(default)
    output_size = tuple(output_size)
    if len(output_size) == nd + 2 or (len(output_size) == nd + 1 and input.dim() == nd + 1):
        output_size = output_size[-nd:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for i in range(nd):
        lo, hi = default[i] - stride[i], default[i] + stride[i]
        if not lo < output_size[i] < hi:
            raise ValueError(f'invalid output_size "{list(output_size)}" (dim {i} must be '
                             f'between {lo} and {hi})')
    return tuple(int(s) for s in output_size)


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):  # noqa: A002
    kernel = _tuple(kernel_size, nd, "kernel_size")
    stride = kernel if stride is None else _tuple(stride, nd, "stride")
    padding = _tuple(padding, nd, "padding")
    out_sp = _unpool_output_size(input, nd, kernel, stride, padding, output_size)
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    x, unbatched = _batched(input, nd)
    idx = indices.unsqueeze(0) if unbatched else indices
    n, c = x.shape[:2]
    plane = math.prod(out_sp)
    if idx.numel() and (int(idx.max()) >= plane or int(idx.min()) < 0):
        raise RuntimeError(f"Found an invalid max index: {int(idx.max())} (output volumes are "
                           f"of size {'x'.join(map(str, out_sp))}")
    offsets = tensorlib.arange(n * c, device=x.device).reshape((n, c) + (1,) * nd)
    flat = (idx + offsets * plane).reshape(-1)
    # repeated indices (overlapping windows) carry the same value: written once, as torch
    zeros = tensorlib.zeros(n * c * plane, dtype=x.dtype, device=x.device)
    out = tensorlib.scatter(zeros, 0, flat, x.reshape(-1)).reshape((n, c) + out_sp)
    return out.squeeze(0) if unbatched else out


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa
    r"""The partial inverse of max_pool1d: each value goes to its index, zeros elsewhere."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


@autocast_op("max_unpool2d")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa
    r"""The partial inverse of max_pool2d (indices are flat positions in H_out * W_out)."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


@autocast_op("max_unpool3d")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)

