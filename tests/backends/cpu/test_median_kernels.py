"""median_kernels (median/nanmedian of rows of at most 64 elements in one call) against torch
on distinct values, against the op's sort path on ties and NaN, and its refusals."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib._C.dtypes as dt
from tensorlib._C.factory import empty
from tensorlib.testing.composites import compare_with_reference
from tensorlib_cpu import median_kernels as mk


def _run(x, dim, ignore_nan):
    shape = tuple(1 if d == dim else s for d, s in enumerate(x.shape))
    values, indices = empty(shape, x._dtype, x._device), empty(shape, dt.int64, x._device)
    return mk.median(values, indices, x, dim, ignore_nan), values, indices


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((1, 16), 1), ((700, 64), 1), ((3, 5, 7), 1),
                                       ((64, 33), 0), ((1,), 0)])
def test_kernel_matches_torch(dtype, shape, dim):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)
    a.flat[::11] = np.nan
    a.flat[1::13] = np.inf
    for ignore_nan, name in ((False, "median"), (True, "nanmedian")):
        done, values, indices = _run(tl.from_numpy(a), dim, ignore_nan)
        assert done
        theirs = getattr(torch, name)(torch.from_numpy(a), dim, keepdim=True)
        np.testing.assert_array_equal(values.numpy(), theirs.values.numpy())
        known = ~np.isnan(theirs.values.numpy()) | (not ignore_nan)  # all-NaN: torch's varies
        np.testing.assert_array_equal(np.where(known, indices.numpy(), 0),
                                      np.where(known, theirs.indices.numpy(), 0))


def test_kernel_equals_the_sort_path_on_ties_and_nan():
    compare_with_reference("median", tl.empty(1).device)


def test_kernel_refusals():
    long_rows = tl.randn(4, 65)
    assert not _run(long_rows, 1, False)[0]                # the radix sort's
    assert _run(long_rows, 0, False)[0]                    # 4-element columns: taken
    assert not _run(tl.randn(8, 8).t(), 1, False)[0]       # not contiguous
    assert not _run(tl.arange(16).view(2, 8), 1, False)[0]  # integers
    x = tl.randn(2, 16, requires_grad=True)                # a graph: the op's own path
    out = tl.median(x, 1)
    out.values.sum().backward()
    assert x.grad.sum().item() == 2
