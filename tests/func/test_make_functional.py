"""functorch's module API (make_functional, make_functional_with_buffers,
combine_state_for_ensemble): outputs equal the module's, gradients through vmap(grad) equal
per-sample autograd, and PyTorch's errors."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.func import grad, vmap
from tensorlib.func._make_functional import (combine_state_for_ensemble, make_functional,
                                             make_functional_with_buffers)


def test_make_functional_runs_a_copy_with_the_given_parameters():
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    fmodel, params = make_functional(model)
    x = tl.randn(3, 4)
    np.testing.assert_allclose(fmodel(params, x).detach().numpy(), model(x).detach().numpy())
    doubled = [p * 2 for p in params]
    assert not np.allclose(fmodel(doubled, x).detach().numpy(), model(x).detach().numpy())
    assert all(p.requires_grad for p in params)
    assert [p.shape for p in params] == [p.shape for p in model.parameters()]
    _, frozen = make_functional(model, disable_autograd_tracking=True)
    assert not any(p.requires_grad for p in frozen)


def test_per_sample_gradients_equal_one_sample_at_a_time():
    tl.manual_seed(1)
    model = nn.Sequential(nn.Linear(5, 7), nn.BatchNorm1d(7), nn.ReLU(), nn.Linear(7, 3)).eval()
    fmodel, params, buffers = make_functional_with_buffers(model)
    x, y = tl.randn(4, 5), tl.tensor([0, 2, 1, 2])

    def loss(p, b, xi, yi):
        return nn.functional.cross_entropy(fmodel(p, b, xi.unsqueeze(0)), yi.unsqueeze(0))

    batched = vmap(grad(loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)
    for i in range(4):
        model.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        for g, p in zip(batched, model.parameters()):
            np.testing.assert_allclose(g[i].detach().numpy(), p.grad.numpy(), rtol=1e-5,
                                       atol=1e-6)


def test_ensemble_state_stacks_each_model():
    tl.manual_seed(2)
    models = [nn.Linear(3, 2) for _ in range(4)]
    fmodel, params, buffers = combine_state_for_ensemble(models)
    assert [tuple(p.shape) for p in params] == [(4, 2, 3), (4, 2)] and buffers == ()
    assert not any(p.requires_grad for p in params)
    x = tl.randn(5, 3)
    out = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x).detach().numpy(), rtol=1e-6)


def test_errors_as_functorch():
    with pytest.raises(RuntimeError, match="make_functional_with_buffers"):
        make_functional(nn.BatchNorm1d(3))
    with pytest.raises(RuntimeError, match="at least one model"):
        combine_state_for_ensemble([])
    with pytest.raises(RuntimeError, match="same class"):
        combine_state_for_ensemble([nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 2))])
    with pytest.raises(RuntimeError, match="training/eval"):
        combine_state_for_ensemble([nn.Linear(2, 2), nn.Linear(2, 2).eval()])
    fmodel, params = make_functional(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="expects 2 params, got 1"):
        fmodel(params[:1], tl.randn(1, 2))
