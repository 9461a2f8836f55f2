r"""nn.functional: spatial transformers (grid_sample, affine_grid).

NOTE [ Sampling by gathered taps ]
grid_sample follows PyTorch's grid sampler arithmetic exactly (GridSampler.h): a grid
coordinate in [-1, 1] is unnormalized to a pixel position (align_corners: -1 and 1 are the
centres of the corner pixels; otherwise their outer edges), then moved into range by the
padding mode (border clips, reflection folds at the edges). Each output point then reads a
few integer taps per spatial dim -- 1 (nearest, rounded half to even), 2 (linear) or 4
(bicubic, Keys' cubic convolution with A = -0.75, the padding applied to each tap) -- with a
weight per tap. All taps of all points are read by one `gather` from the (N, C, prod(S))
input, an out-of-range tap reads 0, and the weighted taps are summed. Everything is composed
from differentiable ops: the input's gradient is the gather's scatter-add, the grid's flows
through the weights (and the unnormalize / clip / reflect arithmetic, which passes no
gradient where a coordinate is clipped, as PyTorch's `clip_coordinates_set_grad`).
"""
import itertools
import math
import warnings

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.nn._functional.grid_sample_fused import try_fused_grid_sample
from tensorlib.ops._autocast import autocast_op

__all__ = ["grid_sample", "affine_grid"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_CUBIC_A = -0.75


def _warn_align_corners():
    warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.",
                  stacklevel=3)


# ---- coordinates (PyTorch's grid_sampler_unnormalize / compute_coordinates) -----------------
def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(coord, size):
    """Into [0, size - 1]; no gradient where it clips (at the limits included)."""
    coord = tensorlib.where(coord > 0, coord, 0.0)
    return tensorlib.where(coord < size - 1, coord, float(size - 1))


def _reflect(coord, twice_low, twice_high):
    """Fold coord into [twice_low / 2, twice_high / 2] by reflecting at its ends."""
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = coord - low
    shifted = tensorlib.where(shifted < 0, -shifted, shifted)
    extra = tensorlib.fmod(shifted, span)
    flips = tensorlib.floor(shifted / span)
    even = tensorlib.remainder(flips, 2) == 0
    return tensorlib.where(even, extra + low, span - extra + low)


def _pad_coordinates(coord, size, padding_mode, align_corners):
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


# ---- taps per spatial dim: (position, weight or None) ----------------------------------------
def _nearest_taps(coord, size, padding_mode, align_corners):
    source = _pad_coordinates(_unnormalize(coord, size, align_corners), size, padding_mode,
                              align_corners)
    # weight 1, but a function of the grid, so the grid gets torch's (zero) gradient, not None
    return [(tensorlib.round(source).detach(), source * 0 + 1)]


def _linear_taps(coord, size, padding_mode, align_corners):
    source = _pad_coordinates(_unnormalize(coord, size, align_corners), size, padding_mode,
                              align_corners)
    left = tensorlib.floor(source).detach()
    return [(left, left + 1 - source), (left + 1, source - left)]


def _cubic_weights(t):
    """Keys' cubic convolution at distances 1 + t, t, 1 - t, 2 - t (PyTorch's
    get_cubic_upsample_coefficients)."""
    a = _CUBIC_A

    def near(x):             # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):              # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_taps(coord, size, padding_mode, align_corners):
    source = _unnormalize(coord, size, align_corners)
    left = tensorlib.floor(source).detach()
    weights = _cubic_weights(source - left)
    return [(_pad_coordinates(left + (k - 1), size, padding_mode, align_corners).detach(), w)
            for k, w in enumerate(weights)]


_TAPS = {"nearest": _nearest_taps, "bilinear": _linear_taps, "bicubic": _cubic_taps}


def _sample(input, taps_per_dim):  # noqa: A002
    """sum over tap combinations of weight * input[taps] (0 outside), see
    NOTE [ Sampling by gathered taps ]. taps_per_dim: per spatial dim of input, a list of
    (position, weight) tensors of shape (N, P); a tap outside the input reads 0 (masked after
    the product, so a non-finite weight of a masked tap does not leak)."""
    n, c = input.shape[:2]
    sizes = input.shape[2:]
    strides = [math.prod(sizes[d + 1:]) for d in range(len(sizes))]
    flats, weights, valids = [], [], []
    for combo in itertools.product(*taps_per_dim):
        flat, weight, valid = 0, 1, True
        for d, (pos, w) in enumerate(combo):
            valid = (pos >= 0) & (pos <= sizes[d] - 1) & valid
            index = pos.clamp(0, sizes[d] - 1).to(tensorlib.int64)
            flat = flat + index * strides[d]
            weight = w * weight
        flats.append(flat)
        valids.append(valid)
        weights.append(weight)
    k = len(flats)
    points = flats[0].shape[1]
    flat = tensorlib.stack(flats, 1).reshape(n, 1, k * points).expand(n, c, k * points)
    values = tensorlib.gather(input.reshape(n, c, -1), 2, flat).reshape(n, c, k, points)
    valid = tensorlib.stack(valids, 1).unsqueeze(1)
    weight = tensorlib.stack(weights, 1).unsqueeze(1)
    return tensorlib.where(valid, values * weight, 0.0).sum(2)


def _check_grid_sampler(input, grid, mode):  # noqa: A002
    """PyTorch's checks and messages; the messages are built only on failure (formatting
    the sizes on every call was a third of this check's time)."""
    for arg, name in ((input, "input"), (grid, "grid")):
        if not isinstance(arg, TensorImpl):
            raise TypeError(f"grid_sample(): argument '{name}' must be Tensor, not "
                            f"{type(arg).__name__}")
    if input.device != grid.device:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be on same device, but "
                           f"input is on {input.device} and grid is on {grid.device}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found "
                           f"{grid.dtype.scalar_name}")
    ishape, gshape = input.shape, grid.shape
    ndim = len(ishape)

    def sizes():
        return f"input with sizes {list(ishape)} and grid with sizes {list(gshape)}"
    if ndim == 0 or len(gshape) == 0 or ishape[0] != gshape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {sizes()}")
    if gshape[-1] != ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {ndim - 2} in "
                           f"last dimension, but got grid with sizes {list(gshape)}")
    for d in range(2, ndim):
        if ishape[d] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(ishape)} with "
                               f"dimension {d} being empty")
    rank = 4 if ndim == 4 else 5
    if ndim != rank or len(gshape) != rank:
        raise RuntimeError(f"grid_sampler(): expected {rank}D input and grid with same number "
                           f"of dimensions, but got {sizes()}")
    if rank == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"grid_sampler(): not implemented for "
                                  f"'{input.dtype.scalar_name}'")


@autocast_op("grid_sample")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):  # noqa
    r"""Sample input (N, C, H_in, W_in) at grid (N, H_out, W_out, 2) -> (N, C, H_out, W_out)
    (or 5-D: (N, C, D, H, W) at (N, D_out, H_out, W_out, 3)). grid[..., 0] is x (width),
    grid[..., 1] y, grid[..., 2] z, each normalized to [-1, 1].

    mode: 'bilinear' | 'nearest' | 'bicubic' (4-D only); padding_mode: 'zeros' | 'border' |
    'reflection'. Differentiable with respect to input and grid.
    """
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    _check_grid_sampler(input, grid, mode)
    fused = try_fused_grid_sample(input, grid, mode, padding_mode, align_corners)
    if fused is not None:
        return fused
    return composite_grid_sample(input, grid, mode, padding_mode, align_corners)


def composite_grid_sample(input, grid, mode, padding_mode, align_corners):  # noqa: A002
    """grid_sample in tensorlib ops on any device (NOTE [ Sampling by gathered taps ]); the
    arguments are already checked."""
    n, c = input.shape[:2]
    out_spatial = tuple(grid.shape[1:-1])
    points = math.prod(out_spatial)
    if n * c * points == 0:
        return tensorlib.zeros((n, c) + out_spatial, dtype=input.dtype, device=input.device)
    coords = grid.reshape(n, points, grid.shape[-1])
    nd = input.dim() - 2
    taps = []
    for d in range(nd):                      # spatial dim d of input is grid component nd-1-d
        size = input.shape[2 + d]
        taps.append(_TAPS[mode](coords[:, :, nd - 1 - d], size, padding_mode, align_corners))
    return _sample(input, taps).reshape((n, c) + out_spatial)


# ---- affine_grid ----------------------------------------------------------------------------
def _base_axis(steps, align_corners, like):
    """PyTorch's linspace_from_neg_one: the pixel centres in [-1, 1], on like's device."""
    if steps <= 1:
        return tensorlib.zeros(max(steps, 1), dtype=like.dtype, device=like.device)
    axis = tensorlib.linspace(-1.0, 1.0, steps, dtype=like.dtype, device=like.device)
    return axis if align_corners else axis * ((steps - 1) / steps)


def affine_grid(theta, size, align_corners=None):
    r"""The sampling grid of a batch of affine maps: theta (N, 2, 3) and size (N, C, H, W) give
    (N, H, W, 2); theta (N, 3, 4) and size (N, C, D, H, W) give (N, D, H, W, 3). Each grid
    point is theta @ (x, y[, z], 1) over the output's normalized pixel centres.
    Differentiable with respect to theta."""
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    if not isinstance(theta, TensorImpl):
        raise TypeError(f"affine_grid(): argument 'theta' must be Tensor, not "
                        f"{type(theta).__name__}")
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) in (4, 5):
        nd = len(size) - 2
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (nd, nd + 1):
            raise ValueError(f"Expected a batch of {nd}D affine matrices of shape "
                             f"Nx{nd}x{nd + 1} for size {size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {nd + 1}] but got: [{theta.shape[0]}, {nd + 1}].")
    # base[..., :] = (x, y[, z], 1) with x along the last spatial dim
    axes = [_base_axis(s, align_corners, theta) for s in spatial]
    mesh = tensorlib.meshgrid(*axes, indexing="ij")
    ones = tensorlib.ones(spatial, dtype=theta.dtype, device=theta.device)
    base = tensorlib.stack(list(mesh[::-1]) + [ones], dim=-1).reshape(-1, nd + 1)
    grid = tensorlib.matmul(base, theta.transpose(1, 2))
    return grid.reshape((size[0],) + spatial + (nd,))
