"""Fractional max pooling (functional and modules) against PyTorch given the same
`_random_samples`: values, indices and gradients, batched and not, 2-D and 3-D; its own
draws (values are the input's at the returned indices); errors."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
RNG = np.random.default_rng(31)

CASES = [(2, (2, 3, 9, 8), (2, 3), (5, 4)), (2, (3, 11, 7), 2, (6, 3)),
         (2, (1, 2, 6, 6), 3, (4, 1)), (2, (2, 1, 5, 5), 1, (5, 5)),
         (3, (2, 2, 7, 8, 6), (2, 2, 3), (4, 3, 3)), (3, (2, 9, 7, 5), 2, (5, 4, 2))]


def _run(lib, nd, a, kernel, out, samples, requires_grad=False):
    x = lib.tensor(a, requires_grad=requires_grad)
    fn = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
    return x, fn(x, kernel, out, return_indices=True, _random_samples=lib.tensor(samples))


@pytest.mark.parametrize("nd,shape,kernel,out", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_torch_with_the_same_samples(nd, shape, kernel, out, dtype):
    a = RNG.standard_normal(shape).astype(dtype)
    n = 1 if len(shape) == nd + 1 else shape[0]
    samples = RNG.random((n, shape[-nd - 1], nd)).astype(dtype)
    x, (v, i) = _run(tensorlib, nd, a, kernel, out, samples, True)
    tx, (tv, ti) = _run(torch, nd, a, kernel, out, samples, True)
    np.testing.assert_array_equal(v.detach().numpy(), tv.detach().numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    g = RNG.standard_normal(tuple(tv.shape)).astype(dtype)
    (v * tensorlib.tensor(g)).sum().backward()
    (tv * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_on_each_device(device):
    a = RNG.standard_normal((2, 3, 8, 7))
    samples = RNG.random((2, 3, 2))
    x = tensorlib.tensor(a, device=device, requires_grad=True)
    v, i = F.fractional_max_pool2d_with_indices(x, 2, (4, 5), _random_samples=tensorlib.tensor(
        samples, device=device))
    tv, ti = TF.fractional_max_pool2d_with_indices(torch.tensor(a), 2, (4, 5),
                                                   _random_samples=torch.tensor(samples))
    np.testing.assert_array_equal(v.detach().cpu().numpy(), tv.numpy())
    np.testing.assert_array_equal(i.cpu().numpy(), ti.numpy())
    v.sum().backward()
    assert x.grad.device == x.device and float(x.grad.sum().item()) == v.numel()


def test_output_ratio_and_own_draws():
    x = tensorlib.randn(2, 3, 10, 9)
    v, i = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True)
    assert tuple(v.shape) == (2, 3, 5, 4)
    np.testing.assert_array_equal(x.reshape(2, 3, -1).gather(2, i.reshape(2, 3, -1)).numpy(),
                                  v.reshape(2, 3, -1).numpy())
    v3 = F.fractional_max_pool3d(tensorlib.randn(1, 2, 6, 6, 6), 2, output_ratio=0.5)
    assert tuple(v3.shape) == (1, 2, 3, 3, 3)


@pytest.mark.parametrize("nd", [2, 3])
def test_modules_match_torch(nd):
    shape = (2, 2) + (7,) * nd
    a = RNG.standard_normal(shape)
    samples = RNG.random((2, 2, nd))
    ours = getattr(nn, f"FractionalMaxPool{nd}d")(2, output_size=4, return_indices=True,
                                                    _random_samples=tensorlib.tensor(samples))
    ref = getattr(torch.nn, f"FractionalMaxPool{nd}d")(2, output_size=4, return_indices=True,
                                                       _random_samples=torch.tensor(samples))
    assert repr(ours) == repr(ref)
    assert "_random_samples" in dict(ours.named_buffers())
    for got, want in zip(ours(tensorlib.tensor(a)), ref(torch.tensor(a))):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("kwargs", [{}, {"output_size": 2, "output_ratio": 0.5},
                                    {"output_ratio": 1.5}, {"output_ratio": (0.5, 0)}])
def test_module_errors(kwargs):
    with pytest.raises(ValueError) as ref:
        torch.nn.FractionalMaxPool2d(2, **kwargs)
    with pytest.raises(ValueError) as got:
        nn.FractionalMaxPool2d(2, **kwargs)
    assert str(got.value) == str(ref.value)


X = np.zeros((2, 3, 7, 6), dtype=np.float32)
S = np.full((2, 3, 2), 0.5, dtype=np.float32)
ERRORS = [
    ((X, 3, (6, 5)), {"_random_samples": S}),
    ((X, 2, (7, 5)), {"_random_samples": S}),
    ((X, (2, 3), (4, 6)), {"_random_samples": S}),
    ((X, 2, (4, 4)), {"_random_samples": S[:, :2]}),
    ((X, 2, (4, 4)), {"_random_samples": S.astype(np.float64)}),
    ((X, 2, (4, 4)), {"_random_samples": S[:, :, 0]}),
    ((X, 2, (4, 4)), {"_random_samples": S[:1]}),
    ((X[:, :, None], 2, (4, 4)), {}),
    ((X[:, :0], 2, (4, 4)), {}),
    ((X.astype(np.int64), 2, (4, 4)), {"_random_samples": S.astype(np.int64)}),
    ((X, (2, 2, 2), (4, 4)), {}),
    ((X, 2, (4, 4, 4)), {}),
    ((X, 2), {}),
    ((X, 2), {"output_ratio": 0.5}),
]


@pytest.mark.parametrize("args,kwargs", ERRORS)
def test_errors_match_torch(args, kwargs):
    def call(lib):
        conv = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        kw = {k: lib.tensor(v) for k, v in kwargs.items() if isinstance(v, np.ndarray)}
        kw.update({k: v for k, v in kwargs.items() if not isinstance(v, np.ndarray)})
        return lib.nn.functional.fractional_max_pool2d(*conv, **kw)
    with pytest.raises(Exception) as ref:
        call(torch)
    with pytest.raises(type(ref.value)) as got:
        call(tensorlib)
    assert str(got.value) == str(ref.value)


def test_3d_pool_size_error():
    with pytest.raises(RuntimeError) as ref:
        TF.fractional_max_pool3d(torch.zeros(1, 2, 5, 5, 5), 2, (3, 3, 6))
    with pytest.raises(RuntimeError) as got:
        F.fractional_max_pool3d(tensorlib.zeros(1, 2, 5, 5, 5), 2, (3, 3, 6))
    assert str(got.value) == str(ref.value)
