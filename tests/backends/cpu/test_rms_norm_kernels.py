"""RMSNorm on the CPU backend's fused kernels (layer_norm's with the mean taken as 0): the
forward in inference and training, the input's and the weight's gradients, and a double
backward (written in ops) agree with PyTorch."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F

torch = pytest.importorskip("torch")


def _pair(shape, dtype, seed, scale=1.0):
    x = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)
    return tl.from_numpy(x.copy()), torch.from_numpy(x.copy())


CASES = [((4, 8), (8,)), ((3, 5, 16), (16,)), ((2, 3, 4, 6), (4, 6)), ((700, 1024), (1024,)),
         ((5, 3), (3,))]


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("shape,normalized", CASES)
@pytest.mark.parametrize("with_weight", [True, False])
def test_forward_and_gradients_match_torch(dtype, rtol, shape, normalized, with_weight):
    x, tx = _pair(shape, dtype, 0, scale=3.0)
    w, tw = _pair(normalized, dtype, 1) if with_weight else (None, None)
    x.requires_grad_(), tx.requires_grad_()
    if with_weight:
        w.requires_grad_(), tw.requires_grad_()
    g, tg = _pair(shape, dtype, 2)
    out = F.rms_norm(x, normalized, w, eps=1e-6)
    expected = torch.nn.functional.rms_norm(tx, normalized, tw, eps=1e-6)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=rtol,
                               atol=rtol)
    out.backward(g)
    expected.backward(tg)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=rtol * 10,
                               atol=rtol * 10)
    if with_weight:
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=rtol * 10,
                                   atol=rtol * 10 * shape[0])
    with tl.no_grad():
        inference = F.rms_norm(x, normalized, w, eps=1e-6)
    np.testing.assert_allclose(inference.numpy(), expected.detach().numpy(), rtol=rtol,
                               atol=rtol)


def test_default_eps_strided_input_and_float16():
    x, tx = _pair((6, 10), np.float32, 3)
    for ours, theirs in ((x.t(), tx.t()), (x.half(), tx.half()), (x * 1e-4, tx * 1e-4)):
        ours.requires_grad_(), theirs.requires_grad_()
        a = F.rms_norm(ours, (ours.shape[-1],))
        b = torch.nn.functional.rms_norm(theirs, (theirs.shape[-1],))
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.detach().float().numpy(), b.detach().float().numpy(),
                                   rtol=2e-3, atol=2e-3)
        a.sum().backward()
        b.sum().backward()
        np.testing.assert_allclose(ours.grad.float().numpy(), theirs.grad.float().numpy(),
                                   rtol=2e-3, atol=2e-3)


def test_double_backward_matches_torch():
    x, tx = _pair((3, 7), np.float64, 4)
    w, tw = _pair((7,), np.float64, 5)
    for t in (x, tx, w, tw):
        t.requires_grad_()
    results = []
    for m, a, b in ((tl, x, w), (torch, tx, tw)):
        out = m.nn.functional.rms_norm(a, (7,), b, eps=1e-5)
        (ga,) = m.autograd.grad((out * out.detach().exp()).sum(), a, create_graph=True)
        ga.pow(2).sum().backward()
        results.append((a.grad.numpy(), b.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_gradcheck_through_the_kernels():
    x = tl.from_numpy(np.random.default_rng(6).standard_normal((3, 5))).requires_grad_()
    w = tl.from_numpy(np.random.default_rng(7).standard_normal(5)).requires_grad_()
    assert tl.autograd.gradcheck(lambda a, b: F.rms_norm(a, (5,), b, eps=1e-3), (x, w))


def test_module_trains_like_torch():
    x, tx = _pair((8, 32), np.float32, 8)
    ours, theirs = tl.nn.RMSNorm(32), torch.nn.RMSNorm(32)
    for module, inp in ((ours, x), (theirs, tx)):
        module(inp).pow(2).mean().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-4, atol=1e-6)
