"""Shared helpers for the autograd tests."""
import numpy as np

import tensorlib as tl


def leaf(values, dtype=tl.float64, requires_grad=True):
    return tl.tensor(values, dtype=dtype, requires_grad=requires_grad)


def npy(t):
    return t.detach().numpy()


def close(t, expected, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(npy(t), np.asarray(expected, dtype=np.float64), rtol=rtol,
                               atol=atol)
