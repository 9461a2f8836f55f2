"""torch.signal.windows against torch: every window, both sym settings, short and longer
lengths, float32/float64, on every test device; torch's ValueErrors."""
import numpy as np
import pytest

import tensorlib
from tensorlib.signal import windows

torch = pytest.importorskip("torch")

CASES = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {}),
         ("exponential", {"tau": 2.5}), ("gaussian", {}), ("gaussian", {"std": 0.7}),
         ("general_cosine", {"a": [0.46, 0.3, 0.24]}), ("general_hamming", {}),
         ("general_hamming", {"alpha": 0.6}), ("hamming", {}), ("hann", {}), ("kaiser", {}),
         ("kaiser", {"beta": 4.0}), ("nuttall", {})]


@pytest.mark.parametrize("name,extra", CASES)
@pytest.mark.parametrize("M", [0, 1, 2, 9, 16])
@pytest.mark.parametrize("sym", [True, False])
def test_window_matches_torch(device, name, extra, M, sym):
    for ours_dt, torch_dt, tol in ((tensorlib.float64, torch.float64, 1e-12),
                                   (tensorlib.float32, torch.float32, 2e-6)):
        ours = getattr(windows, name)(M, sym=sym, dtype=ours_dt, device=device, **extra)
        want = getattr(torch.signal.windows, name)(M, sym=sym, dtype=torch_dt, **extra)
        assert ours.dtype is ours_dt and ours.shape == tuple(want.shape)
        assert str(ours.device).startswith(device)
        np.testing.assert_allclose(ours.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


def test_exponential_center_and_requires_grad():
    ours = windows.exponential(7, center=2.0, sym=False, requires_grad=True)
    want = torch.signal.windows.exponential(7, center=2.0, sym=False)
    np.testing.assert_allclose(ours.detach().numpy(), want.numpy(), rtol=1e-6)
    assert ours.requires_grad and ours.dtype is tensorlib.float32


@pytest.mark.parametrize("call,message", [
    (lambda w: w.hann(-1), "non-negative window length"),
    (lambda w: w.gaussian(4, std=0.0), "Standard deviation must be positive"),
    (lambda w: w.exponential(4, tau=-1.0), "Tau must be positive"),
    (lambda w: w.exponential(4, center=1.0), "Center must be None"),
    (lambda w: w.kaiser(4, beta=-1.0), "beta must be non-negative"),
    (lambda w: w.general_cosine(4, a=[]), "Coefficients cannot be empty"),
])
def test_errors_match_torch(call, message):
    with pytest.raises(ValueError, match=message):
        call(windows)
    with pytest.raises(ValueError, match=message):
        call(torch.signal.windows)



def test_integer_dtype_is_refused_as_torch():
    with pytest.raises(ValueError, match="expects float32 or float64"):
        windows.hann(4, dtype=tensorlib.int64)
    with pytest.raises(ValueError, match="expects float32 or float64"):
        torch.signal.windows.hann(4, dtype=torch.int64)
