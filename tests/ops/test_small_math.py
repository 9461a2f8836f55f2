"""logaddexp2, isreal, dist and unravel_index against torch: values, gradients, errors."""
import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")

INF = float("inf")


def _pair(values, dtype="float64", device="cpu", grad=False):
    ours = tensorlib.tensor(values, dtype=getattr(tensorlib, dtype), device=device)
    theirs = torch.tensor(values, dtype=getattr(torch, dtype))
    if grad:
        ours.requires_grad_(True)
        theirs.requires_grad_(True)
    return ours, theirs


def test_logaddexp2_values_infinities_and_grad(device):
    a, ta = _pair([0.0, 3.0, -INF, INF, -1000.0, 2.5], device=device, grad=True)
    b, tb = _pair([0.0, -2.0, -INF, INF, -1001.0, 7.0], device=device, grad=True)
    out, want = tensorlib.logaddexp2(a, b), torch.logaddexp2(ta, tb)
    np.testing.assert_allclose(out.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-12)
    fa, tfa = _pair([0.5, -1.0, 4.0], device=device, grad=True)
    fb, tfb = _pair([1.5, 2.0, -3.0], device=device, grad=True)
    fa.logaddexp2(fb).sum().backward()
    torch.logaddexp2(tfa, tfb).sum().backward()
    np.testing.assert_allclose(fa.grad.cpu().numpy(), tfa.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(fb.grad.cpu().numpy(), tfb.grad.numpy(), rtol=1e-12)
    with pytest.raises(NotImplementedError):
        tensorlib.logaddexp2(tensorlib.tensor([1]), tensorlib.tensor([2]))
    with pytest.raises(NotImplementedError):
        torch.logaddexp2(torch.tensor([1]), torch.tensor([2]))


def test_isreal(device):
    for values, dtype in (([1 + 0j, 1 + 1j, -0j], "complex64"), ([1.0, 2.0], "float32"),
                          ([1, 2], "int64")):
        if dtype.startswith("complex") and device != "cpu":
            continue                    # complex tensors live on the cpu only so far
        ours, theirs = _pair(values, dtype, device)
        out = tensorlib.isreal(ours)
        assert out.dtype is tensorlib.bool
        assert out.cpu().numpy().tolist() == torch.isreal(theirs).tolist()
        assert ours.isreal().cpu().numpy().tolist() == theirs.isreal().tolist()


@pytest.mark.parametrize("p", [2, 1, 0, 3.5, INF, -INF])
def test_dist_values_and_grad(device, p):
    a, ta = _pair([[1.0, -2.0, 3.0], [0.5, 0.0, 4.0]], device=device, grad=True)
    b, tb = _pair([0.5, 1.0, -1.0], device=device, grad=True)
    out, want = tensorlib.dist(a, b, p), torch.dist(ta, tb, p)
    np.testing.assert_allclose(out.item(), want.item(), rtol=1e-12)
    if p != 0:
        out.backward()
        want.backward()
        np.testing.assert_allclose(a.grad.cpu().numpy(), ta.grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(b.grad.cpu().numpy(), tb.grad.numpy(), rtol=1e-10)
    assert a.dist(b, p).item() == pytest.approx(want.item(), rel=1e-12)


def test_unravel_index(device):
    for flat, shape in (([4, 1, 5, -1], (2, 3)), ([[1234], [5678]], (100, 100)), (7, 10),
                        ([0, 23], (2, 3, 4))):
        ours, theirs = _pair(flat, "int64", device)
        out, want = tensorlib.unravel_index(ours, shape), torch.unravel_index(theirs, shape)
        assert len(out) == len(want)
        for o, w in zip(out, want):
            assert o.dtype is tensorlib.int64 and o.cpu().numpy().tolist() == w.tolist()
    with pytest.raises(TypeError):
        tensorlib.unravel_index(tensorlib.tensor([1.0]), (2, 3))
    with pytest.raises(TypeError):
        torch.unravel_index(torch.tensor([1.0]), (2, 3))
    with pytest.raises(ValueError):
        tensorlib.unravel_index(tensorlib.tensor([1]), (2, -3))
    with pytest.raises(ValueError):
        torch.unravel_index(torch.tensor([1]), (2, -3))
