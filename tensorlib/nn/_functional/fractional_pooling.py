r"""nn.functional: fractional max pooling (Graham, 2014). Each plane pools windows of the
kernel's size starting at pseudo-random positions, one `_random_samples` value per plane and
spatial dim (u in [0, 1)): start_i = int((i + u) a) - int(u a), a = (in - k) / (out - 1), the
last window flush with the end, computed in the input's dtype as PyTorch does so that the
same samples choose the same windows. The windows are gathered from the flattened plane with
an index table computed by ops on the input's device, then reduced with `max`, so autograd
comes from gather and max."""
import math
import numbers

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]


def _ints(value, n, name, what):
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    value = tuple(value)
    if len(value) == 1:
        value = value * n
    if len(value) != n:
        raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of Ints")
    return tuple(int(v) for v in value)


def _starts(sample, in_size, out_size, pool):
    """The window starts (planes, out_size) along one dim for each plane's sample u (1-D),
    in the samples' dtype as PyTorch computes them; the last window flush with the end."""
    i64 = tensorlib.int64
    last = tensorlib.full((sample.shape[0], min(out_size, 1)), in_size - pool, dtype=i64,
                          device=sample.device)
    if out_size <= 1:
        return last
    alpha = tensorlib.full((), in_size - pool, dtype=sample.dtype, device=sample.device) / \
        (out_size - 1)
    i = tensorlib.arange(out_size - 1, dtype=sample.dtype, device=sample.device)
    first = ((i + sample.reshape(-1, 1)) * alpha).to(i64) - \
        (sample * alpha).to(i64).reshape(-1, 1)
    return tensorlib.cat([first, last], 1)


def _check(name, input, samples, nd):  # noqa: A002
    if not isinstance(input, TensorImpl):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    if samples.size(2) != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.size(2)}.")
    batched = input.dim() == nd + 2
    if batched and samples.size(0) < input.size(0):
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.size(1) != input.size(-nd - 1):
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    for d in range(1 if batched else 0, input.dim()):
        if input.size(d) == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {d} "
                               f"being empty.")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}_out_frame\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")


def _pool(name, input, kernel_size, output_size, samples, nd):  # noqa: A002
    kernel = _ints(kernel_size, nd, name, "kernel_size")
    out = _ints(output_size, nd, name, "output_size")
    _check(name, input, samples, nd)
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    n, c, sizes = x.size(0), x.size(1), tuple(x.shape[2:])
    where = "fractional_max_pool3d_out()" if nd == 3 else f"{name}()"
    for o, k, s, label in zip(out, kernel, sizes, ("height", "width") if nd == 2 else
                              ("time", "height", "width")):
        if o + k - 1 > s:
            raise RuntimeError(f"{where}: pool {label} {k} too large relative to input "
                               f"{label} {s}")
    u = samples[:n].detach().to(x.device).reshape(n * c, nd)
    # PyTorch pairs the samples with the dims last-to-first in 2-D (u[0] is the width's)
    order = (1, 0) if nd == 2 else (0, 1, 2)
    flat = 0
    for d in range(nd):
        starts = _starts(u[:, order[d]], sizes[d], out[d], kernel[d])
        pos = starts.reshape((n * c,) + tuple(out[d] if e == d else 1 for e in range(nd))
                             + (1,) * nd) + \
            tensorlib.arange(kernel[d], device=x.device).reshape(
                (1,) * (1 + nd) + tuple(kernel[d] if e == d else 1 for e in range(nd)))
        flat = flat * sizes[d] + pos
    windows = math.prod(out)
    index = flat.expand((n * c,) + out + kernel).reshape(n, c, windows * math.prod(kernel))
    values = x.reshape(n, c, -1).gather(2, index).reshape(n, c, windows, -1)
    if values.size(3) == 0 or windows == 0:
        result = values.new_full((n, c) + out, float("-inf"))
        indices = tensorlib.zeros((n, c) + out, dtype=tensorlib.int64, device=x.device)
    else:
        result, which = values.max(3)
        indices = index.reshape(n, c, windows, -1).gather(3, which.unsqueeze(3)).squeeze(3)
        result, indices = result.reshape((n, c) + out), indices.reshape((n, c) + out)
    if not batched:
        result, indices = result.squeeze(0), indices.squeeze(0)
    return result, indices


def _samples(input, nd, samples):  # noqa: A002
    if samples is not None:
        return samples
    n = 1 if input.dim() == nd + 1 else input.size(0)
    return tensorlib.rand(n, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    r"""(values, indices into each flattened H x W plane) of 2-D fractional max pooling."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or "
                         "an output_ratio")
    if output_size is None:
        if len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a "
                             "single Int or tuple of Ints.")
        ratio = _pair_ratio(output_ratio, 2)
        output_size = [int(input.size(-2) * ratio[0]), int(input.size(-1) * ratio[1])]
    return _pool("fractional_max_pool2d", input, kernel_size, output_size,
                 _samples(input, 2, _random_samples), 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    r"""(values, indices into each flattened T x H x W volume) of 3-D fractional max
    pooling."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool3d requires specifying either an output_size or "
                         "an output_ratio")
    if output_size is None:
        ratio = _pair_ratio(output_ratio, 3)
        output_size = [int(input.size(-3) * ratio[0]), int(input.size(-2) * ratio[1]),
                       int(input.size(-1) * ratio[2])]
    return _pool("fractional_max_pool3d", input, kernel_size, output_size,
                 _samples(input, 3, _random_samples), 3)


def _pair_ratio(ratio, n):
    return tuple(ratio) if isinstance(ratio, (list, tuple)) else (ratio,) * n


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,  # noqa: A002
                          return_indices=False, _random_samples=None):
    r"""2-D fractional max pooling; (values, indices) when return_indices."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,  # noqa: A002
                          return_indices=False, _random_samples=None):
    r"""3-D fractional max pooling; (values, indices) when return_indices."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]
