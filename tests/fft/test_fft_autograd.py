"""Gradients of tensorlib.fft and stft/istft against torch (the same real loss of the
results, backward, the inputs' gradients compared; the values of the hfft2/hfftn/ihfft2/
ihfftn family too), and gradcheck through them: every transform with n/s, dim and norm,
including the Hermitian bookkeeping of rfft/irfft."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(21)
REAL = RNG.standard_normal((3, 4, 5))
CPLX = RNG.standard_normal((3, 4, 5)) + 1j * RNG.standard_normal((3, 4, 5))


def _loss(lib, out):
    """A real loss weighting every real and imaginary part differently."""
    parts = lib.view_as_real(out.resolve_conj()) if out.is_complex() else out
    weights = lib.cos(lib.arange(parts.numel(), dtype=lib.float64)).reshape(parts.shape)
    return (parts * weights).sum()


TRANSFORMS = [
    ("fft", "c", {}), ("fft", "r", {"n": 7, "dim": 1, "norm": "ortho"}),
    ("fft", "c", {"n": 3, "norm": "forward"}), ("ifft", "c", {"dim": 0, "n": 5}),
    ("rfft", "r", {}), ("rfft", "r", {"n": 8, "norm": "ortho"}), ("rfft", "r", {"n": 3}),
    ("irfft", "c", {}), ("irfft", "c", {"n": 9, "norm": "forward"}),
    ("irfft", "c", {"n": 4, "dim": 1}), ("hfft", "c", {"n": 7}), ("ihfft", "r", {"dim": 0}),
    ("fft2", "c", {"s": (3, 6)}), ("ifft2", "c", {"norm": "ortho"}),
    ("rfft2", "r", {"dim": (0, 2)}), ("irfft2", "c", {"s": (5, 6)}),
    ("fftn", "r", {}), ("ifftn", "c", {"dim": (0, 1), "norm": "forward"}),
    ("rfftn", "r", {"s": (4, 4), "dim": (1, 2)}), ("irfftn", "c", {}),
    ("irfftn", "c", {"s": (2, 3, 7), "norm": "ortho"}),
    ("hfft2", "c", {}), ("ihfft2", "r", {"norm": "ortho"}), ("hfftn", "c", {"s": (3, 4, 6)}),
    ("ihfftn", "r", {}),
]


def _torch_grad(name, data, kwargs):
    x = torch.tensor(data, requires_grad=True)
    _loss(torch, getattr(torch.fft, name)(x, **kwargs)).backward()
    return x.grad.resolve_conj().numpy()


@pytest.mark.parametrize("name, kind, kwargs", TRANSFORMS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(TRANSFORMS)])
def test_gradients_match_torch(name, kind, kwargs):
    data = REAL if kind == "r" else CPLX
    x = tl.tensor(data, requires_grad=True)
    out = getattr(tl.fft, name)(x, **kwargs)
    theirs = getattr(torch.fft, name)(torch.tensor(data), **kwargs)
    assert tuple(out.shape) == tuple(theirs.shape)
    assert out.dtype.name == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(out.detach().resolve_conj().numpy(),
                               theirs.resolve_conj().numpy(), atol=1e-10)
    _loss(tl, out).backward()
    assert x.grad.dtype is x.dtype
    np.testing.assert_allclose(x.grad.numpy(), _torch_grad(name, data, kwargs), atol=1e-10)


@pytest.mark.parametrize("name, kind, kwargs", TRANSFORMS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(TRANSFORMS)])
def test_gradcheck(name, kind, kwargs):
    data = (REAL if kind == "r" else CPLX)[:2, :3]
    kwargs = dict(kwargs)
    if "s" in kwargs:
        kwargs["s"] = tuple(min(s, 4) for s in kwargs["s"])
    x = tl.tensor(data, requires_grad=True)
    assert gradcheck(lambda x: getattr(tl.fft, name)(x, **kwargs), (x,))


def test_gradgradcheck_through_real_transforms():
    x = tl.tensor(REAL[0, :2], requires_grad=True)
    assert gradgradcheck(lambda x: tl.fft.irfft(tl.fft.rfft(x) ** 2, n=5), (x,))


def test_spectral_power_gradient():
    """d/dx sum |rfft(x)|^2 against torch on an odd and an even length."""
    for n in (6, 7):
        ours = tl.tensor(REAL[0, 0, :n] if n <= 5 else RNG.standard_normal(n),
                         requires_grad=True)
        theirs = torch.tensor(ours.detach().numpy(), requires_grad=True)
        (tl.fft.rfft(ours).abs() ** 2).sum().backward()
        (torch.fft.rfft(theirs).abs() ** 2).sum().backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-10)


STFT = [{"n_fft": 8, "hop_length": 2}, {"n_fft": 8, "hop_length": 3, "center": False},
        {"n_fft": 8, "win_length": 6, "normalized": True, "hop_length": 2},
        {"n_fft": 6, "hop_length": 2, "onesided": False, "pad_mode": "constant"}]


@pytest.mark.parametrize("kwargs", STFT)
def test_stft_istft_gradients_match_torch(kwargs):
    kwargs = dict(kwargs)
    signal = RNG.standard_normal((2, 20))
    window = np.hanning(kwargs.get("win_length", kwargs["n_fft"]) + 2)[1:-1]
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(signal, requires_grad=True)
        w = lib.tensor(window, requires_grad=True)
        spec = lib.stft(x, window=w, return_complex=True, **kwargs)
        inv = {k: v for k, v in kwargs.items() if k != "pad_mode"}
        back = lib.istft(spec * (1 + 0.5j), window=w, length=20, **inv)
        (_loss(lib, spec) + (back * lib.cos(lib.arange(40.0, dtype=lib.float64))
                             .reshape(2, 20)).sum()).backward()
        grads.append((x.grad.numpy(), w.grad.numpy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, atol=1e-9)


def test_stft_istft_gradcheck():
    x = tl.tensor(RNG.standard_normal(12), requires_grad=True)
    w = tl.tensor(np.hanning(8)[1:-1] + 0.1, requires_grad=True)
    assert gradcheck(lambda x, w: tl.stft(x, 6, 2, window=w, return_complex=True), (x, w))
    spec = tl.stft(x.detach(), 6, 2, window=w.detach(), return_complex=True)
    spec.requires_grad_()
    assert gradcheck(lambda s: tl.istft(s, 6, 2, window=w.detach(), length=12), (spec,))
