"""Run one function body with tensorlib and with torch and compare the results' structure,
shapes, dtypes and values."""
import numpy as np

import tensorlib as tl


def to(lib, a, requires_grad=False):
    """numpy array (or a tree of them) -> float64 tensors of `lib`."""
    if isinstance(a, tuple):
        return tuple(to(lib, x, requires_grad) for x in a)
    if isinstance(a, list):
        return [to(lib, x, requires_grad) for x in a]
    if isinstance(a, dict):
        return {k: to(lib, v, requires_grad) for k, v in a.items()}
    if not isinstance(a, np.ndarray):
        return a
    t = lib.tensor(a, dtype=lib.float64)
    return t.requires_grad_(True) if requires_grad else t


def assert_same(ours, theirs, rtol=1e-10, atol=1e-12):
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b, rtol, atol)
        return
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and set(ours) == set(theirs)
        for k in theirs:
            assert_same(ours[k], theirs[k], rtol, atol)
        return
    assert isinstance(ours, tl.Tensor), type(ours)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol,
                               atol=atol)
