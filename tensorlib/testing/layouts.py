"""Memory layouts for testing kernels: a value array placed on a device as a contiguous,
strided, transposed, broadcast (stride 0) or offset view, and output views inside a larger
buffer so that writes outside them are caught. Used by the conformance suite; handy for a
plugin's own kernel tests too."""
import numpy as np

import tensorlib
from tensorlib.testing import oracle as O

LAYOUTS = ("contiguous", "strided", "transposed", "broadcast", "broadcast_last", "offset")
OUT_LAYOUTS = ("strided", "transposed", "offset")   # besides contiguous


def applies(layout, shape):
    if layout == "contiguous":
        return True
    if layout == "transposed":
        return len(shape) >= 2
    if layout == "broadcast":
        return len(shape) >= 1 and shape[0] > 1
    if layout == "broadcast_last":
        return len(shape) >= 1 and shape[-1] > 1
    return len(shape) >= 1


def _base_shape(layout, shape):
    shape = tuple(shape)
    if layout == "strided":                          # every other element of the last dim
        return shape[:-1] + (2 * shape[-1],)
    if layout == "transposed":                       # the last two dims swapped
        return shape[:-2] + (shape[-1], shape[-2])
    if layout == "broadcast":                        # stride 0 along dim 0
        return (1,) + shape[1:]
    if layout == "broadcast_last":                   # stride 0 along the last dim
        return shape[:-1] + (1,)
    if layout == "offset":                           # starts one row past element 0
        return (shape[0] + 1,) + shape[1:]
    return shape


def _view(x, layout, shape):
    if layout == "strided":
        return x[..., ::2]
    if layout == "transposed":
        return x.swapaxes(-1, -2)
    if layout in ("broadcast", "broadcast_last"):
        return np.broadcast_to(x, shape) if isinstance(x, np.ndarray) else x.expand(tuple(shape))
    if layout == "offset":
        return x[1:]
    return x


def _junk(shape, dtype):
    """A recognisable fill for the memory around a view."""
    dtype = np.dtype(dtype)
    if dtype == O.BOOL:
        return np.arange(int(np.prod(shape))).reshape(shape) % 3 == 0
    return np.full(shape, -77, dtype)


def put(values, layout, device):
    """(a tensor on `device` with `layout`, the values it holds: constant along a broadcast
    dim)."""
    values = np.asarray(values)
    shape = values.shape
    if layout in ("broadcast", "broadcast_last"):
        base = np.ascontiguousarray(values[(slice(0, 1),) if layout == "broadcast"
                                           else (..., slice(0, 1))])
        values = np.broadcast_to(base, shape).copy()
    else:
        base = _junk(_base_shape(layout, shape), values.dtype)
        _view(base, layout, shape)[...] = values
    return _view(tensorlib.tensor(base).to(device), layout, shape), values


class Out:
    """An output view inside a larger device buffer; read() fails if the kernel wrote around
    the view."""

    def __init__(self, shape, dtype, layout, device, init=None):
        self.shape, self.layout = tuple(shape), layout
        self.pattern = _junk(_base_shape(layout, shape), dtype)
        if init is not None:
            _view(self.pattern, layout, shape)[...] = init
        self.base = tensorlib.tensor(self.pattern).to(device)
        self.tensor = _view(self.base, layout, self.shape)

    def read(self):
        full = self.base.cpu().numpy()
        inside = np.zeros(self.pattern.shape, bool)
        _view(inside, self.layout, self.shape)[...] = True
        if not np.array_equal(full[~inside], self.pattern[~inside]):
            raise AssertionError(f"the kernel wrote outside its {self.layout} output view")
        return np.array(_view(full, self.layout, self.shape))


def check(got, want, rtol=1e-5, atol=1e-6):
    """Floats within tolerance (NaN where NaN is expected), everything else exactly."""
    want = np.asarray(want)
    if got.shape != want.shape:
        raise AssertionError(f"shape {got.shape}, expected {want.shape}")
    if got.dtype.kind == "f" or want.dtype.kind == "f":
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def wide(x):
    return x.astype(np.float64) if x.dtype.kind == "f" else x
