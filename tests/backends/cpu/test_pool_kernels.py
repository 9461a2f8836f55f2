"""The fused max-pool kernels (forward values and indices, backward scatter) against a numpy
reference that scans each window in order: the first maximum wins ties, a NaN wins and stays
(PyTorch's rule). Shapes reach the vectorised 2x2 plane path (even and odd widths), the
dense-row path (3x3) and the table path (padding)."""
import numpy as np
import pytest

import tensorlib as tl


def _reference(x, k, s, p):
    n, c, h, w = x.shape
    o0 = (h + 2 * p - k) // s + 1
    o1 = (w + 2 * p - k) // s + 1
    vals = np.empty((n, c, o0, o1), x.dtype)
    idx = np.empty((n, c, o0, o1), np.int64)
    for a, b, i, j in np.ndindex(n, c, o0, o1):
        best, at = None, -1
        for u in range(k):
            for v in range(k):
                y, q = i * s - p + u, j * s - p + v
                if not (0 <= y < h and 0 <= q < w):
                    continue
                val = x[a, b, y, q]
                if at < 0 or val > best or (np.isnan(val) and not np.isnan(best)):
                    best, at = val, y * w + q
        vals[a, b, i, j], idx[a, b, i, j] = best, at
    return vals, idx


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,k,s,p", [((2, 3, 8, 10), 2, 2, 0), ((1, 2, 7, 6), 2, 2, 0),
                                         ((2, 3, 11, 11), 2, 2, 0), ((1, 1, 3, 3), 2, 2, 0),
                                         ((1, 2, 4, 5), 2, 2, 0), ((2, 1, 9, 9), 3, 2, 0),
                                         ((1, 2, 6, 6), 3, 2, 1)])
def test_values_indices_and_gradient(dtype, shape, k, s, p):
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(-3, 4, size=shape).astype(dtype)          # many ties
    x.flat[rng.choice(x.size, size=max(1, x.size // 15), replace=False)] = np.nan
    vals, idx = _reference(x, k, s, p)
    t = tl.tensor(x, requires_grad=True)
    out, got_idx = tl.nn.functional.max_pool2d(t, k, s, p, return_indices=True)
    np.testing.assert_array_equal(out.detach().numpy(), vals)
    np.testing.assert_array_equal(got_idx.numpy(), idx)
    g = rng.standard_normal(vals.shape).astype(dtype)
    out.backward(tl.tensor(g))
    expected = np.zeros(x.shape)
    planes = expected.reshape(shape[0] * shape[1], -1)
    for pl, (gi, ii) in enumerate(zip(g.reshape(len(planes), -1), idx.reshape(len(planes), -1))):
        np.add.at(planes[pl], ii, gi)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6)
