"""AdaptiveLogSoftmaxWithLoss against PyTorch with the same weights: per-target
log-probabilities, loss, gradients, log_prob, predict, unbatched input, and errors."""
import warnings

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(5)


def _pair(in_features=8, n_classes=12, cutoffs=(3, 7), **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # zero-size tail layers warn in both
        ref = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs),
                                                  **kw).double()
        ours = nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs),
                                             **kw).double()
    ours.load_state_dict({k: tensorlib.tensor(v.detach().numpy())
                          for k, v in ref.state_dict().items()})
    return ours, ref


@pytest.mark.parametrize("kw", [{}, {"head_bias": True, "div_value": 2.0}])
def test_forward_and_gradients_match_torch(device, kw):
    ours, ref = _pair(**kw)
    ours.to(device)
    a = RNG.standard_normal((9, 8))
    t = np.array([0, 11, 3, 7, 2, 5, 10, 6, 1])
    x, tx = tensorlib.tensor(a, device=device, requires_grad=True), torch.tensor(
        a, requires_grad=True)
    out, loss = ours(x, tensorlib.tensor(t, device=device))
    tout, tloss = ref(tx, torch.tensor(t))
    np.testing.assert_allclose(out.detach().cpu().numpy(), tout.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(loss.item(), tloss.item(), atol=1e-12)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), atol=1e-12)
    for (name, p), (_, tp) in zip(ours.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(p.grad.cpu().numpy(), tp.grad.numpy(), atol=1e-12,
                                   err_msg=name)
    np.testing.assert_allclose(ours.log_prob(x).detach().cpu().numpy(),
                               ref.log_prob(tx).detach().numpy(), atol=1e-12)
    np.testing.assert_array_equal(ours.predict(x).cpu().numpy(), ref.predict(tx).numpy())


def test_unbatched_and_predict_branches():
    ours, ref = _pair()
    a = RNG.standard_normal(8)
    out, loss = ours(tensorlib.tensor(a), tensorlib.tensor(9))
    tout, tloss = ref(torch.tensor(a), torch.tensor(9))
    assert out.dim() == 0
    np.testing.assert_allclose(out.item(), tout.item(), atol=1e-12)
    for scale in (0.0, 5.0, -5.0):             # all-head, all-tail and mixed argmaxes
        with torch.no_grad():
            ref.head.weight[3:] += scale
        ours.load_state_dict({k: tensorlib.tensor(v.detach().numpy())
                              for k, v in ref.state_dict().items()})
        b = RNG.standard_normal((20, 8))
        np.testing.assert_array_equal(ours.predict(tensorlib.tensor(b)).numpy(),
                                      ref.predict(torch.tensor(b)).numpy())


@pytest.mark.parametrize("cutoffs", [[], [5, 3], [0, 4], [4, 12], [4, 4], [2.5]])
def test_bad_cutoffs(cutoffs):
    with pytest.raises(ValueError) as ref:
        torch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs)
    with pytest.raises(ValueError) as got:
        nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs)
    assert str(got.value) == str(ref.value)


@pytest.mark.parametrize("x_shape,target", [((3, 8), [0, 1]), ((3, 2, 8), [0, 1, 2]),
                                            ((3, 8), [[0]]), ((2, 8), 1), ((2, 8), [0, 12]),
                                            ((2, 8), [-1, 0])])
def test_forward_errors(x_shape, target):
    ours, ref = _pair()
    a = np.zeros(x_shape)
    with pytest.raises(RuntimeError) as want:
        ref(torch.tensor(a), torch.tensor(target))
    with pytest.raises(RuntimeError) as got:
        ours(tensorlib.tensor(a), tensorlib.tensor(target))
    assert str(got.value).replace("tensorlib.Size", "torch.Size") == str(want.value)


@pytest.mark.parametrize("nd,shape", [(1, (2, 3, 5)), (2, (4, 16, 7, 9)), (2, (16, 7, 9)),
                                      (3, (2, 3, 4, 5, 6))])
def test_global_average_pooling_matches_torch(nd, shape):
    a = np.random.default_rng(0).standard_normal(shape)
    results = []
    for m in (tensorlib, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        y = getattr(m.nn.functional, f"adaptive_avg_pool{nd}d")(x, (1,) * nd)
        (y * 3).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
