"""CrossMapLRN2d against PyTorch: its forward's running window (channel 0 always counted, a
legacy quirk kept) and its hand-written backward's symmetric window, for even and odd sizes
and sizes larger than the channel count; errors and repr."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(17)


@pytest.mark.parametrize("channels,size", [(7, 3), (9, 5), (3, 5), (6, 2), (8, 4), (1, 3)])
def test_values_and_gradients_match_torch(device, channels, size):
    a = RNG.standard_normal((2, channels, 3, 2))
    g = RNG.standard_normal(a.shape)
    m, ref = nn.CrossMapLRN2d(size, 0.1, 0.75, 2.0), torch.nn.CrossMapLRN2d(size, 0.1, 0.75, 2.0)
    assert repr(m) == repr(ref)
    x, tx = tensorlib.tensor(a, device=device, requires_grad=True), torch.tensor(
        a, requires_grad=True)
    y, ty = m(x), ref(tx)
    np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), atol=1e-12)
    (y * tensorlib.tensor(g, device=device)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), atol=1e-12)


def test_errors_match_torch():
    with pytest.raises(ValueError) as ref:
        torch.nn.CrossMapLRN2d(3)(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError) as got:
        nn.CrossMapLRN2d(3)(tensorlib.zeros(2, 3, 4))
    assert str(got.value) == str(ref.value)
    # size 1: PyTorch's backward cannot place its window
    x, tx = tensorlib.ones(1, 4, 2, 2, requires_grad=True), torch.ones(1, 4, 2, 2,
                                                                       requires_grad=True)
    with pytest.raises(RuntimeError) as ref:
        torch.nn.CrossMapLRN2d(1)(tx).sum().backward()
    with pytest.raises(RuntimeError) as got:
        nn.CrossMapLRN2d(1)(x).sum().backward()
    assert str(got.value) == str(ref.value)
