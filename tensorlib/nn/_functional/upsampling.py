r"""nn.functional: resampling (interpolate / upsample), pixel (un)shuffle, channel shuffle.

Interpolation is separable: each spatial dim is resampled in turn by `index_select` with a
table of source positions (nearest, nearest-exact), or by two (linear, bilinear, trilinear)
or four (bicubic: Keys' cubic convolution, A = -0.75, taps clamped at the border)
`index_select`s blended with per-position weights (the linear ones in one pass of a backend's
`linear_resample` kernel where it has one), using PyTorch's coordinate arithmetic
(align_corners, scale_factor used as given unless recompute_scale_factor). antialias=True
(bilinear, bicubic, lanczos) is PyTorch's separable antialias filter: a triangle, a cubic
(A = -0.5, PIL's) or PIL's Lanczos-3 stretched by the downscale factor, its weights
normalized per output, applied per dim as a small dense (out, in) matrix by matmul. The
tables, weights and matrices are device tensors made by ops once per geometry and cached
(`_index_tables.cached`). Everything is composed from differentiable ops.
"""
import math
import numbers
import struct
import warnings

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.autograd import forward_ad as _forward_ad
from tensorlib.autograd.function import Function
from tensorlib.nn._functional._index_tables import cached
from tensorlib.ops._autocast import autocast_op
from tensorlib.ops._composites import optional_kernel

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
           "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]

_LINEAR_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3}
_INTERPOLATING_DIMS = dict(_LINEAR_DIMS, bicubic=2)


def _src_scale(in_size, out_size, align_corners, scale):
    """PyTorch's area_pixel_compute_scale."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if scale is not None and scale > 0:
        return 1.0 / scale
    return in_size / out_size


def _f32(v):
    """v rounded to float32 (Python floats are float64)."""
    return struct.unpack("f", struct.pack("f", v))[0]


def _nearest_identity(in_size, out_size, scale, exact):
    """Whether nearest(-exact) resampling keeps every position (then it is skipped)."""
    if out_size != in_size:
        return False
    if not exact:
        return True
    s = _f32(1.0 / scale if scale is not None and scale > 0 else in_size / out_size)
    # float32 arithmetic as the table's: a sum and a product of float32 values are exact in
    # float64, so one rounding to float32 reproduces them
    return all(math.floor(_f32(_f32(d + 0.5) * s)) == d for d in range(out_size))


def _nearest_index(in_size, out_size, scale, exact, device):
    """Source positions, floor(dst * s) (or floor((dst + 0.5) * s)) in float32, PyTorch's."""
    def build():
        s = _f32(1.0 / scale if scale is not None and scale > 0 else in_size / out_size)
        dst = tensorlib.arange(out_size, dtype=tensorlib.float32, device=device)
        src = tensorlib.floor((dst + 0.5) * s if exact else dst * s)
        return tensorlib.clamp(src.to(tensorlib.int64), max=in_size - 1)
    return cached(("nearest", in_size, out_size, scale, exact, device), build)


def _linear_identity(in_size, out_size, align_corners, scale):
    """Whether linear resampling along a dim keeps every position (then it is skipped)."""
    s = _src_scale(in_size, out_size, align_corners, scale)
    return out_size == in_size and (s == 1.0 or in_size == 1)


def _source(in_size, out_size, align_corners, scale, device):
    """Source coordinates of the outputs (float64): dst * s, or s (dst + 0.5) - 0.5."""
    s = _src_scale(in_size, out_size, align_corners, scale)
    dst = tensorlib.arange(out_size, dtype=tensorlib.float64, device=device)
    return dst * s if align_corners else s * (dst + 0.5) - 0.5


def _linear_tables(in_size, out_size, align_corners, scale, x, shape):
    """(i0, i1, w0, w1): the two source positions and their weights (shaped to broadcast
    along the resampled dim), source coordinates below 0 clamped to 0."""
    def build():
        src = tensorlib.clamp(_source(in_size, out_size, align_corners, scale, x.device),
                              min=0.0)
        i0 = tensorlib.clamp(tensorlib.floor(src).to(tensorlib.int64), max=in_size - 1)
        i1 = tensorlib.clamp(i0 + 1, max=in_size - 1)
        lam = src - i0
        return (i0, i1, (1.0 - lam).reshape(shape).to(x.dtype), lam.reshape(shape).to(x.dtype))
    return cached(("linear", in_size, out_size, align_corners, scale, tuple(shape), x._device,
                   x.dtype), build)


def _cubic_near(x, a):
    """Keys' cubic convolution kernel on |x| <= 1."""
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic_far(x, a):
    """... and on 1 < |x| < 2."""
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _cubic_coefficients(t, a):
    """Cubic convolution weights of the taps at distances 1 + t, t, 1 - t, 2 - t."""
    return [_cubic_far(t + 1, a), _cubic_near(t, a), _cubic_near(1 - t, a), _cubic_far(2 - t, a)]


def _cubic_tables(in_size, out_size, align_corners, scale, x, shape):
    """PyTorch's upsample_bicubic2d: source positions without the clamp at 0, four taps
    from floor(src) - 1, each index clamped into the input; [(index, weight)] per tap."""
    def build():
        src = _source(in_size, out_size, align_corners, scale, x.device)
        left = tensorlib.floor(src)
        weights = _cubic_coefficients(src - left, -0.75)
        left = left.to(tensorlib.int64)
        return [(tensorlib.clamp(left - 1 + k, 0, in_size - 1),
                 weights[k].reshape(shape).to(x.dtype)) for k in range(4)]
    return cached(("cubic", in_size, out_size, align_corners, scale, tuple(shape), x._device,
                   x.dtype), build)


def _aa_filter(mode):
    """(interp_size, filter) of PyTorch's antialias: a triangle for bilinear, the cubic
    kernel with A = -0.5 (PIL's) for bicubic, PIL's Lanczos-3 (sinc(x) sinc(x / 3) on
    |x| < 3) for lanczos."""
    if mode == "bilinear":
        return 2, lambda x: tensorlib.clamp(1.0 - tensorlib.abs(x), min=0.0)
    if mode == "lanczos":
        return 6, lambda x: tensorlib.where(tensorlib.abs(x) < 3.0,
                                            tensorlib.sinc(x) * tensorlib.sinc(x / 3.0), 0.0)

    def cubic(x):
        x = tensorlib.abs(x)
        return tensorlib.where(x < 1.0, _cubic_near(x, -0.5),
                               tensorlib.where(x < 2.0, _cubic_far(x, -0.5), 0.0))
    return 4, cubic


def _antialias_matrix(in_size, out_size, align_corners, scale, mode, x):
    """(out, in) weights of PyTorch's _compute_weights_aa: the filter's support widens by the
    downscale factor, output i's window [xmin, xmin + xsize) is truncated to the input, and
    each row is normalized to sum 1. Evaluated over the whole (out, in) grid, zero outside
    the windows."""
    def build():
        interp_size, filt = _aa_filter(mode)
        s = _src_scale(in_size, out_size, align_corners, scale)
        support = interp_size * 0.5 * s if s >= 1.0 else interp_size * 0.5
        max_size = int(math.ceil(support)) * 2 + 1
        invscale = 1.0 / s if s >= 1.0 else 1.0
        f64, i64 = tensorlib.float64, tensorlib.int64
        center = (tensorlib.arange(out_size, dtype=f64, device=x.device) + 0.5) * s
        center = center.reshape(-1, 1)
        xmin = tensorlib.floor(tensorlib.clamp(center - support + 0.5, min=0.0)).to(i64)
        xend = tensorlib.clamp(tensorlib.floor(center + support + 0.5).to(i64), max=in_size)
        xsize = tensorlib.clamp(xend - xmin, 0, max_size)
        p = tensorlib.arange(in_size, dtype=i64, device=x.device)
        inside = (p >= xmin) & (p < xmin + xsize)
        w = tensorlib.where(inside, filt((p.to(f64) - center + 0.5) * invscale), 0.0)
        total = w.sum(1, keepdim=True)
        w = tensorlib.where(total != 0.0, w / tensorlib.where(total != 0.0, total, 1.0), w)
        return w.to(x.dtype)
    return cached(("antialias", in_size, out_size, align_corners, scale, mode, x._device,
                   x.dtype), build)


def _resample_nearest(x, outs, scales, exact):
    nd = len(outs)
    for i in range(nd):
        axis = x.dim() - nd + i
        in_size = x.shape[axis]
        if _nearest_identity(in_size, outs[i], scales[i], exact):
            continue
        idx = _nearest_index(in_size, outs[i], scales[i], exact, x._device)
        x = tensorlib.index_select(x, axis, idx)
    return x


def _resample_linear(x, outs, scales, align_corners):
    nd = len(outs)
    for i in range(nd):
        axis = x.dim() - nd + i
        in_size = x.shape[axis]
        if _linear_identity(in_size, outs[i], align_corners, scales[i]):
            continue
        shape = [1] * (x.dim() - axis)
        shape[0] = outs[i]
        i0, i1, w0, w1 = _linear_tables(in_size, outs[i], align_corners, scales[i], x, shape)
        x = _blend_rows(x, axis, outs[i], i0, i1, w0, w1)
    return x


def _blend(x, axis, i0, i1, w0, w1):
    return tensorlib.index_select(x, axis, i0) * w0 + tensorlib.index_select(x, axis, i1) * w1


def _blend_rows(x, axis, size, i0, i1, w0, w1):
    """x's positions i0 and i1 along axis, weighted by w0 and w1: one node on the device's
    `linear_resample` kernel (one pass) for a contiguous float32/float64 x, else the
    composition (two index_selects, two products and a sum). Not under forward AD: the
    composition's ops carry the tangents."""
    if (x.dtype in (tensorlib.float32, tensorlib.float64) and x.is_contiguous()
            and _forward_ad._level is None
            and optional_kernel(x._device, "linear_resample") is not None):
        return _LinearResample.apply(x, axis, size, i0, i1, w0, w1)
    return _blend(x, axis, i0, i1, w0, w1)


class _LinearResample(Function):
    """_blend by `linear_resample(out, x, axis, i0, i1, w0, w1)`; the gradient adds g * w0
    and g * w1 back at i0 and i1 (index_add), in ops."""

    @staticmethod
    def forward(ctx, x, axis, size, i0, i1, w0, w1):
        shape = tuple(x.shape[:axis]) + (size,) + tuple(x.shape[axis + 1:])
        out = tensorlib.empty(shape, dtype=x.dtype, device=x.device)
        if not optional_kernel(x._device, "linear_resample")(out, x, axis, i0, i1, w0, w1):
            out = _blend(x, axis, i0, i1, w0, w1)         # declined (a compiled capture)
        ctx.save_for_backward(i0, i1, w0, w1)
        ctx.axis, ctx.shape = axis, tuple(x.shape)
        return out

    @staticmethod
    def backward(ctx, grad):
        i0, i1, w0, w1 = ctx.saved_tensors
        grad_x = tensorlib.zeros(ctx.shape, dtype=grad.dtype, device=grad.device)
        grad_x = grad_x.index_add(ctx.axis, i0, grad * w0).index_add(ctx.axis, i1, grad * w1)
        return grad_x, None, None, None, None, None, None


def _resample_cubic(x, outs, scales, align_corners):
    nd = len(outs)
    for i in range(nd):
        axis = x.dim() - nd + i
        shape = [1] * (x.dim() - axis)
        shape[0] = outs[i]
        out = 0
        for idx, weight in _cubic_tables(x.shape[axis], outs[i], align_corners, scales[i], x,
                                         shape):
            out = tensorlib.index_select(x, axis, idx) * weight + out
        x = out
    return x


def _resample_antialias(x, outs, scales, align_corners, mode):
    """x (N, C, H, W): H then W through their (out, in) antialias matrices."""
    rows, cols = (_antialias_matrix(x.shape[2 + i], outs[i], align_corners, scales[i], mode, x)
                  for i in range(2))
    return tensorlib.matmul(tensorlib.matmul(rows, x), cols.t())


def _output_and_scales(input, nd, size, scale_factor, recompute_scale_factor):  # noqa: A002
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and output size of {list(size)}. "
                                 f"Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                                 f"and output size in (o1, o2, ...,oK) format.")
            outs = tuple(int(s) for s in size)
        else:
            outs = (int(size),) * nd
        return outs, (None,) * nd
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != nd:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(input.shape[2:])} and scale_factor of "
                             f"shape {list(scale_factor)}. Please provide input tensor in (N, "
                             f"C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                             f"format.")
        factors = tuple(float(f) for f in scale_factor)
    else:
        factors = (float(scale_factor),) * nd
    outs = tuple(int(math.floor(float(input.shape[2 + i]) * factors[i])) for i in range(nd))
    if recompute_scale_factor:
        return outs, (None,) * nd
    return outs, factors


@autocast_op("interpolate")
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa
                recompute_scale_factor=None, antialias=False):
    r"""Resample (N, C, *spatial) to `size` or by `scale_factor`.

    Modes: 'nearest', 'nearest-exact' (1-3 spatial dims), 'linear' (3-D input), 'bilinear'
    and 'bicubic' (4-D), 'trilinear' (5-D), 'area' (adaptive average pooling). align_corners
    (interpolating modes only): the corner pixels' centres of input and output coincide;
    otherwise pixels are areas and out-of-range source coordinates are clamped (PyTorch's
    convention). antialias (bilinear, bicubic and lanczos, 4-D; lanczos needs it): PyTorch's
    antialias filter, which widens with the downscale factor.
    """
    if not isinstance(input, TensorImpl):
        raise TypeError(f"interpolate(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if mode == "lanczos":
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
    nd = input.dim() - 2
    if mode == "area" and size is None:
        recompute_scale_factor = True
    outs, scales = _output_and_scales(input, nd, size, scale_factor, recompute_scale_factor)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    supported = nd in (1, 2, 3) and (mode in ("nearest", "nearest-exact", "area")
                                     or _INTERPOLATING_DIMS.get(mode) == nd
                                     or (mode == "lanczos" and nd == 2))
    if not supported:
        if mode in _LINEAR_DIMS and nd in (1, 2, 3):
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                      f"{_LINEAR_DIMS[mode] + 2}D input")
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.dim()}D) for the modes: nearest | linear | "
                                  f"bilinear | bicubic | trilinear | area | nearest-exact "
                                  f"(got {mode})")
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, input.shape[2:]))}) and output "
                           f"({', '.join(map(str, outs))})")
    if antialias:
        return _resample_antialias(input, outs, scales, align_corners, mode)
    if mode in _LINEAR_DIMS:
        return _resample_linear(input, outs, scales, align_corners)
    if mode == "bicubic":
        return _resample_cubic(input, outs, scales, align_corners)
    if mode == "area":
        from tensorlib.nn._functional import pooling
        fn = {1: pooling.adaptive_avg_pool1d, 2: pooling.adaptive_avg_pool2d,
              3: pooling.adaptive_avg_pool3d}[nd]
        return fn(input, outs)
    return _resample_nearest(input, outs, scales, mode == "nearest-exact")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):  # noqa
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):  # noqa: A002
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use "
                  "nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):  # noqa: A002
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use "
                  "nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- pixel shuffle ------------------------------------------------------------------------
def _check_factor(name, factor, what):
    if not isinstance(factor, numbers.Integral) or isinstance(factor, bool):
        raise TypeError(f"{name}(): argument '{what}' must be int, not "
                        f"{type(factor).__name__}")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input, upscale_factor):  # noqa: A002
    r"""(*, C r^2, H, W) -> (*, C, H r, W r): channel blocks of r^2 become r x r patches."""
    _check_factor("pixel_shuffle", upscale_factor, "upscale_factor")
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    r = int(upscale_factor)
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    batch = tuple(input.shape[:-3])
    nb = len(batch)
    x = input.reshape(batch + (c // (r * r), r, r, h, w))
    x = x.permute(tuple(range(nb)) + (nb, nb + 3, nb + 1, nb + 4, nb + 2))
    return x.reshape(batch + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):  # noqa: A002
    r"""(*, C, H r, W r) -> (*, C r^2, H, W): the inverse of pixel_shuffle."""
    _check_factor("pixel_unshuffle", downscale_factor, "downscale_factor")
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    r = int(downscale_factor)
    c, h, w = input.shape[-3:]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by "
                           f"downscale_factor, but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by "
                           f"downscale_factor, but input.size(-1)={w} is not divisible by {r}")
    batch = tuple(input.shape[:-3])
    nb = len(batch)
    x = input.reshape(batch + (c, h // r, r, w // r, r))
    x = x.permute(tuple(range(nb)) + (nb, nb + 2, nb + 4, nb + 1, nb + 3))
    return x.reshape(batch + (c * r * r, h // r, w // r))


def channel_shuffle(input, groups):  # noqa: A002
    r"""(N, g k, *) -> (N, k g, *): the channels, read as a g x k grid, transposed (ShuffleNet)."""
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool):
        raise TypeError(f"channel_shuffle(): argument 'groups' (position 2) must be int, not "
                        f"{type(groups).__name__}")
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    rest = tuple(input.shape[2:])
    x = input.reshape((n, groups, c // groups) + rest).transpose(1, 2)
    return x.reshape((n, c) + rest)


native_channel_shuffle = channel_shuffle
