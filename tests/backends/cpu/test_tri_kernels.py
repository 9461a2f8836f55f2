"""tri_kernels (tril/triu as row copies and zero fills) equal PyTorch's for every diagonal,
dtype and batch shape, with gradients; strided inputs take the composed path."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib._C.factory import empty
from tensorlib_cpu import tri_kernels

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape", [(5, 6), (6, 5), (2, 3, 4, 4), (1, 0), (300, 700)])
@pytest.mark.parametrize("diagonal", [0, 1, -1, 3, -9, 20])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
def test_tril_triu_equal_torch(shape, diagonal, dtype):
    a = np.random.default_rng(0).standard_normal(shape) * 5
    data = a > 0 if dtype == "bool" else (a + 1j * a if dtype == "complex64" else a).astype(dtype)
    for name in ("tril", "triu"):
        ours = getattr(tl.from_numpy(data.copy()), name)(diagonal)
        theirs = getattr(torch.from_numpy(data.copy()), name)(diagonal)
        assert np.array_equal(ours.numpy(), theirs.numpy())


def test_gradients_strided_inputs_and_in_place():
    a = np.random.default_rng(1).standard_normal((4, 7, 5))
    results = []
    for m in (tl, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        y = x.transpose(1, 2).tril(1) * 2 + x.triu(-1).sum()
        (y * m.arange(7.0)).sum().backward()
        z = m.from_numpy(a.copy())
        z.tril_(-2)
        results.append((y.detach().numpy(), x.grad.numpy(), z.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_kernel_declines_what_it_does_not_take():
    x = tl.from_numpy(np.ones((4, 6), np.float32))
    assert not tri_kernels.tri(empty((6, 4), x.dtype, x.device), x.t(), 0, True)
    assert not tri_kernels.tri(empty((4, 6), tl.float64, x.device), x, 0, True)
    assert tri_kernels.tri(x, x, 0, True)                  # in place
    assert x.numpy().tolist() == np.tril(np.ones((4, 6))).tolist()
