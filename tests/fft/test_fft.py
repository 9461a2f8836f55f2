"""tensorlib.fft's real-valued helpers against torch.fft; the complex transforms say they
need complex dtypes."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("n", [0, 1, 4, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies_match_torch(n, d, device):
    for name in ("fftfreq", "rfftfreq"):
        ours = getattr(tl.fft, name)(n, d, device=device)
        theirs = getattr(torch.fft, name)(n, d)
        assert ours.dtype == tl.float32 and tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), rtol=1e-6)  # nan too
    ours = tl.fft.fftfreq(5, dtype=tl.float64)
    assert ours.dtype == tl.float64


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), (-1,)])
def test_shifts_match_torch(dim, device):
    x = np.arange(30.0).reshape(5, 6)
    for name in ("fftshift", "ifftshift"):
        ours = getattr(tl.fft, name)(tl.tensor(x, device=device), dim)
        theirs = getattr(torch.fft, name)(torch.tensor(x), dim)
        np.testing.assert_array_equal(ours.cpu().numpy(), theirs.numpy())
    back = tl.fft.ifftshift(tl.fft.fftshift(tl.tensor(x), dim), dim)
    np.testing.assert_array_equal(back.numpy(), x)


def test_shift_is_differentiable():
    x = tl.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda a: tl.fft.fftshift(a, 1) * a, (x,))


def test_complex_transforms_name_what_is_missing():
    with pytest.raises(NotImplementedError, match="tensorlib.fft.rfft .*complex dtypes"):
        tl.fft.rfft(tl.ones(4))
