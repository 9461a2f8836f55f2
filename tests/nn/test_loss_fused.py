"""The reduced regression losses on the backend's one-pass kernels (nn/_functional/loss_fused.py)
agree with PyTorch in value and in both gradients, at NaN, inf and the kinks too; a double
backward runs in ops; the cases the kernels do not take still agree through the composition."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F

torch = pytest.importorskip("torch")

LOSSES = [("l1_loss", {}), ("mse_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
          ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {"delta": 0.7})]


def _pair(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    y = (rng.standard_normal(shape) * 2).astype(dtype)
    flat_x, flat_y = x.reshape(-1), y.reshape(-1)
    flat_x[:6] = [0.5, -0.5, 0.7, 1.0, 2.0, 3.0]          # on the kinks, and equal
    flat_y[:6] = [0.0, 0.0, 0.0, 0.0, 2.0, 3.0]
    return x, y


def _run(module, name, kwargs, x, y, reduction, grads=True):
    a = module.from_numpy(x.copy()).requires_grad_(grads)
    b = module.from_numpy(y.copy()).requires_grad_(grads)
    loss = getattr(module.nn.functional, name)(a, b, reduction=reduction, **kwargs)
    if grads:
        loss.backward()
        return loss.detach().numpy(), a.grad.numpy(), b.grad.numpy()
    return (loss.numpy(),)


@pytest.mark.parametrize("name,kwargs", LOSSES)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-5), (np.float64, 1e-12)])
@pytest.mark.parametrize("shape", [(5, 7), (300, 1000)])
def test_value_and_gradients_match_torch(name, kwargs, reduction, dtype, rtol, shape):
    x, y = _pair(shape, dtype, 0)
    ours, theirs = _run(tl, name, kwargs, x, y, reduction), _run(torch, name, kwargs, x, y,
                                                                  reduction)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * np.abs(b).max())


@pytest.mark.parametrize("name,kwargs", LOSSES)
def test_nan_and_inf_as_torch(name, kwargs):
    x = np.array([np.nan, np.inf, -np.inf, 0.3, 0.0], np.float32)
    y = np.zeros(5, np.float32)
    for reduction in ("mean", "sum"):
        ours, theirs = (_run(m, name, kwargs, x, y, reduction) for m in (tl, torch))
        for a, b in zip(ours, theirs):
            assert np.array_equal(np.isnan(a), np.isnan(b))
            np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-6)


def test_value_does_not_depend_on_the_thread_count():
    x, y = _pair((700, 1000), np.float32, 1)
    before = tl.get_num_threads()
    values = []
    try:
        for n in (1, 2):
            tl.set_num_threads(n)
            values.append(F.mse_loss(tl.from_numpy(x), tl.from_numpy(y)).item())
    finally:
        tl.set_num_threads(before)
    assert values[0] == values[1]


@pytest.mark.parametrize("name,kwargs", LOSSES)
def test_double_backward_matches_torch(name, kwargs):
    x, y = _pair((4, 6), np.float64, 2)
    results = []
    for m in (tl, torch):
        a = m.from_numpy(x.copy()).requires_grad_()
        b = m.from_numpy(y.copy()).requires_grad_()
        loss = getattr(m.nn.functional, name)(a * a, b, **kwargs)
        (ga,) = m.autograd.grad(loss, a, create_graph=True)
        (ga * ga).sum().backward()
        results.append((a.grad.numpy(), b.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_cases_the_kernels_do_not_take_still_match_torch():
    x, y = _pair((6, 8), np.float32, 3)
    w = np.random.default_rng(4).uniform(0.5, 2, (6, 8)).astype(np.float32)
    cases = [
        lambda m, a, b: m.nn.functional.mse_loss(a, b, reduction="none").sum(),
        lambda m, a, b: m.nn.functional.mse_loss(a.t(), b.t()),
        lambda m, a, b: m.nn.functional.l1_loss(a, b[:1].expand(6, 8)),
        lambda m, a, b: m.nn.functional.huber_loss(a, b, weight=m.from_numpy(w)),
        lambda m, a, b: m.nn.functional.smooth_l1_loss(a.half(), b.half()).float(),
        lambda m, a, b: m.nn.functional.mse_loss(a, b.double()),
    ]
    for case in cases:
        results = []
        for m in (tl, torch):
            a = m.from_numpy(x.copy()).requires_grad_()
            b = m.from_numpy(y.copy())
            value = case(m, a, b)
            value.backward()
            results.append((value.detach().numpy(), a.grad.numpy()))
        for ours, theirs in zip(*results):
            np.testing.assert_allclose(ours, theirs, rtol=2e-3, atol=1e-5)


def test_forward_mode_ad_takes_the_composition():
    import tensorlib.autograd.forward_ad as fwAD
    x, y = _pair((3, 4), np.float64, 5)
    tangent = np.ones((3, 4))
    with fwAD.dual_level():
        dual = fwAD.make_dual(tl.from_numpy(x), tl.from_numpy(tangent))
        out = F.mse_loss(dual, tl.from_numpy(y))
        derivative = fwAD.unpack_dual(out).tangent.item()
    assert derivative == pytest.approx(float((2 * (x - y) * tangent).mean()))


@pytest.mark.parametrize("name,kwargs", LOSSES)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_grad_fn_is_named_as_torch_names_it(name, kwargs, reduction):
    # tutorials print loss.grad_fn; the one Function behind the four losses showed
    # `_RegressionLossBackward` for all of them
    x, y = _pair((4, 5), np.float32, 3)
    ours, theirs = (getattr(m.nn.functional, name)(m.from_numpy(x.copy()).requires_grad_(),
                                                  m.from_numpy(y.copy()), reduction=reduction,
                                                  **kwargs)
                    for m in (tl, torch))
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert repr(ours.grad_fn).startswith(f"<{theirs.grad_fn.name()} object at ")
