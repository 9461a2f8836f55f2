"""tensorlib.fft against torch.fft: the transforms (values, dtypes, shapes for n/s, dim,
norm), the frequency helpers and the shifts."""
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


SIGNAL = np.random.default_rng(7).standard_normal((4, 6, 5))
CSIGNAL = SIGNAL + 1j * np.random.default_rng(8).standard_normal((4, 6, 5))


@pytest.mark.parametrize("name, data, kwargs", [
    ("fft", SIGNAL, {}), ("fft", CSIGNAL, {"n": 8, "dim": 1, "norm": "ortho"}),
    ("ifft", CSIGNAL, {"dim": 0, "norm": "forward"}), ("rfft", SIGNAL, {"n": 7}),
    ("irfft", CSIGNAL, {"n": 9}), ("hfft", CSIGNAL, {"dim": 1}), ("ihfft", SIGNAL, {}),
    ("fft2", CSIGNAL, {}), ("ifft2", CSIGNAL, {"s": (3, 4)}), ("rfft2", SIGNAL, {"dim": (0, 2)}),
    ("irfft2", CSIGNAL, {"s": (6, 8)}), ("fftn", SIGNAL, {"norm": "ortho"}),
    ("ifftn", CSIGNAL, {"dim": (0, 1)}), ("rfftn", SIGNAL, {"s": (4, 4), "dim": (1, 2)}),
    ("irfftn", CSIGNAL, {}),
])
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_transforms_match_torch(name, data, kwargs, precision):
    real, cplx = {"float32": (np.float32, np.complex64), "float64": (np.float64, np.complex128)}[
        precision]
    arr = data.astype(cplx if np.iscomplexobj(data) else real)
    ours = getattr(tl.fft, name)(tl.tensor(arr), **kwargs)
    theirs = getattr(torch.fft, name)(torch.tensor(arr), **kwargs)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    tol = 1e-4 if precision == "float32" else 1e-10
    np.testing.assert_allclose(ours.numpy(), theirs.resolve_conj().numpy(), rtol=tol, atol=tol)


def test_integer_input_promotes_and_norm_is_checked():
    ours = tl.fft.fft(tl.arange(4))
    assert ours.dtype is tl.complex64
    np.testing.assert_allclose(ours.numpy(), torch.fft.fft(torch.arange(4)).numpy(), atol=1e-6)
    with pytest.raises(RuntimeError, match="Invalid normalization mode"):
        tl.fft.fft(tl.ones(4), norm="sideways")


def test_devices(device):
    x = tl.tensor(SIGNAL[0], device=device)
    back = tl.fft.irfft(tl.fft.rfft(x.cpu()), n=5).to(device)
    np.testing.assert_allclose(back.cpu().numpy(), SIGNAL[0], atol=1e-5)
    if tl.device(device).type != "cpu":
        with pytest.raises(RuntimeError, match="only supported on the cpu"):
            tl.fft.rfft(x)
        real = tl.fft.irfft(tl.tensor(CSIGNAL[0]).to("cpu"))
        assert real.device.type == "cpu"


@pytest.mark.parametrize("kwargs", [
    {"n_fft": 16}, {"n_fft": 16, "hop_length": 3, "center": False},
    {"n_fft": 16, "win_length": 10, "hann": True, "normalized": True},
    {"n_fft": 12, "hop_length": 4, "onesided": False, "pad_mode": "constant"},
])
def test_stft_and_istft_match_torch(kwargs):
    kwargs = dict(kwargs)
    signal = np.random.default_rng(9).standard_normal((2, 50))
    hann = kwargs.pop("hann", False)
    win = kwargs.get("win_length", kwargs["n_fft"])
    ours_w = tl.tensor(np.hanning(win)) if hann else None
    theirs_w = torch.tensor(np.hanning(win)) if hann else None
    ours = tl.stft(tl.tensor(signal), window=ours_w, return_complex=True, **kwargs)
    theirs = torch.stft(torch.tensor(signal), window=theirs_w, return_complex=True, **kwargs)
    assert ours.dtype is tl.complex128 and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-10)
    inv = {k: v for k, v in kwargs.items() if k != "pad_mode"}
    if hann and not inv.get("center", True):
        return
    back = tl.istft(ours, window=ours_w, length=50, **inv)
    theirs_back = torch.istft(theirs, window=theirs_w, length=50, **inv)
    np.testing.assert_allclose(back.numpy(), theirs_back.numpy(), atol=1e-9)
    if inv.get("center", True):                  # frames cover the whole signal
        np.testing.assert_allclose(back.numpy(), signal, atol=1e-9)


def test_stft_requires_return_complex_for_real_input():
    with pytest.raises(RuntimeError, match="return_complex parameter be given"):
        tl.stft(tl.ones(32), 8)
