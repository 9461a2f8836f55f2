"""Rprop and ASGD against torch.optim step by step (the same gradients each step, float64):
parameters and state after every step, their options, state_dict round trips and errors."""
import numpy as np
import pytest

import tensorlib
import tensorlib.optim as optim

torch = pytest.importorskip("torch")
SHAPES = [(4, 3), (3,), (2, 2)]


def _trajectories(name, kwargs, device="cpu", steps=15, seed=3):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s) for s in SHAPES]
    ours = [tensorlib.tensor(a, device=device, requires_grad=True) for a in init]
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    opt, ref = getattr(optim, name)(ours, **kwargs), getattr(torch.optim, name)(theirs, **kwargs)
    for _ in range(steps):
        # gradients that often keep and often flip their sign (Rprop's two branches)
        grads = [np.round(rng.standard_normal(s), 1) for s in SHAPES]
        for p, q, g in zip(ours, theirs, grads):
            p.grad = tensorlib.tensor(g, device=device)
            q.grad = torch.tensor(g)
        opt.step()
        ref.step()
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().numpy(),
                                       rtol=1e-12, atol=1e-14)
    for p, q in zip(ours, theirs):
        ours_state, ref_state = opt.state[p], ref.state[q]
        assert sorted(ours_state) == sorted(ref_state)
        for key in ref_state:
            np.testing.assert_allclose(np.asarray(ours_state[key].cpu().numpy()),
                                       ref_state[key].numpy(), rtol=1e-12, atol=1e-14)
    return opt, ours


RPROP = [{}, {"lr": 0.1, "etas": (0.3, 1.5)}, {"step_sizes": (1e-3, 0.05)},
         {"maximize": True}]
ASGD = [{}, {"lr": 0.1, "lambd": 1e-2, "alpha": 0.5, "t0": 5},
        {"weight_decay": 0.1, "t0": 0}, {"maximize": True, "t0": 3}]


@pytest.mark.parametrize("kwargs", RPROP)
def test_rprop_matches_torch(kwargs):
    _trajectories("Rprop", kwargs)


@pytest.mark.parametrize("kwargs", ASGD)
def test_asgd_matches_torch(kwargs):
    _trajectories("ASGD", kwargs)


@pytest.mark.parametrize("name,kwargs", [("Rprop", {"lr": 0.05}), ("ASGD", {"t0": 2})])
def test_on_each_device(device, name, kwargs):
    _trajectories(name, kwargs, device=device, steps=5)


@pytest.mark.parametrize("name,kwargs", [("Rprop", {}), ("ASGD", {"t0": 2})])
def test_state_dict_round_trip_continues_the_same(name, kwargs):
    opt, params = _trajectories(name, kwargs, steps=4)
    copy = [p.detach().clone().requires_grad_() for p in params]
    resumed = getattr(optim, name)(copy, **kwargs)
    resumed.load_state_dict(opt.state_dict())
    for p, q in zip(params, copy):
        g = tensorlib.ones_like(p)
        p.grad, q.grad = g, g.clone()
    opt.step()
    resumed.step()
    for p, q in zip(params, copy):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


@pytest.mark.parametrize("name,kwargs", [("Rprop", {"lr": -1}), ("Rprop", {"etas": (1.1, 1.2)}),
                                         ("Rprop", {"etas": (0.5, 0.9)}), ("ASGD", {"lr": -1}),
                                         ("ASGD", {"weight_decay": -1})])
def test_bad_options(name, kwargs):
    with pytest.raises(ValueError) as ref:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as got:
        getattr(optim, name)([tensorlib.zeros(1, requires_grad=True)], **kwargs)
    assert str(got.value) == str(ref.value)


def test_defaults_match_torch():
    for name in ("Rprop", "ASGD"):
        p, q = tensorlib.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
        assert getattr(optim, name)([p]).defaults == getattr(torch.optim, name)([q]).defaults
