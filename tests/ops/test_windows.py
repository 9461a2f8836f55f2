"""The window factories against torch: both periodic settings, lengths 0, 1 and more,
float32/float64, every test device; errors as torch's."""
import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")

WINDOWS = [("hann_window", {}), ("hamming_window", {}), ("hamming_window", {"alpha": 0.5, "beta": 0.3}),
           ("blackman_window", {}), ("bartlett_window", {}), ("kaiser_window", {}),
           ("kaiser_window", {"beta": 3.5})]


@pytest.mark.parametrize("name,extra", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_window_matches_torch(device, name, extra, length, periodic):
    for ours_dt, torch_dt in ((tensorlib.float64, torch.float64), (tensorlib.float32, torch.float32)):
        ours = getattr(tensorlib, name)(length, periodic, dtype=ours_dt, device=device, **extra)
        want = getattr(torch, name)(length, periodic, dtype=torch_dt, **extra)
        assert ours.dtype is ours_dt and str(ours.device).startswith(device)
        tol = 1e-12 if ours_dt is tensorlib.float64 else 1e-5
        np.testing.assert_allclose(ours.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


def test_window_default_dtype_grad_and_errors():
    w = tensorlib.hann_window(8, requires_grad=True)
    assert w.dtype is tensorlib.float32 and w.requires_grad and w.is_leaf
    with pytest.raises(RuntimeError, match="non-negative"):
        tensorlib.hann_window(-1)
    with pytest.raises(RuntimeError, match="floating point"):
        tensorlib.kaiser_window(4, dtype=tensorlib.int64)
    with pytest.raises(TypeError):
        tensorlib.blackman_window(4.0)
    with pytest.raises(TypeError):
        torch.blackman_window(4.0)
