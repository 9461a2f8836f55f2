"""CyclicLR against torch's over several cycles: learning rates and momentum (SGD) or beta1
(Adam) per step for each mode, custom scale functions, state_dict round trips, errors."""
import pytest

import tensorlib
import tensorlib.optim as optim
from tensorlib.optim.lr_scheduler import CyclicLR

torch = pytest.importorskip("torch")


def _pair(opt_name, opt_kwargs, sched_kwargs):
    p, q = tensorlib.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    ours = getattr(optim, opt_name)([{"params": [p]}, {"params": [], "lr": 0.5}], **opt_kwargs)
    ref = getattr(torch.optim, opt_name)([{"params": [q]}, {"params": [], "lr": 0.5}],
                                         **opt_kwargs)
    return (ours, CyclicLR(ours, **sched_kwargs),
            ref, torch.optim.lr_scheduler.CyclicLR(ref, **sched_kwargs))


def _momentum(group):
    return group["betas"][0] if "betas" in group else group.get("momentum")


def _same(ours, ref):
    for g, h in zip(ours.param_groups, ref.param_groups):
        assert g["lr"] == pytest.approx(h["lr"], rel=1e-12, abs=1e-15)
        assert _momentum(g) == pytest.approx(_momentum(h), rel=1e-12)


CASES = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}, {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}, {"base_lr": [0.01, 0.02], "max_lr": 0.1,
                                           "step_size_up": 2, "step_size_down": 5,
                                           "mode": "triangular2"}),
    ("Adam", {"lr": 0.1}, {"base_lr": 0.001, "max_lr": 0.01, "step_size_up": 4,
                           "mode": "exp_range", "gamma": 0.9}),
    ("SGD", {"lr": 0.1}, {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3,
                          "cycle_momentum": False}),
    ("SGD", {"lr": 0.1, "momentum": 0.5}, {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3,
                                           "scale_fn": lambda x: 0.5 ** x,
                                           "scale_mode": "iterations"}),
]


@pytest.mark.parametrize("opt_name,opt_kwargs,sched_kwargs", CASES)
def test_matches_torch_over_cycles(opt_name, opt_kwargs, sched_kwargs):
    ours, sched, ref, ref_sched = _pair(opt_name, opt_kwargs, sched_kwargs)
    _same(ours, ref)
    for _ in range(25):
        ours.step()
        ref.step()
        sched.step()
        ref_sched.step()
        _same(ours, ref)
        assert sched.get_last_lr() == pytest.approx(ref_sched.get_last_lr(), rel=1e-12)


def test_state_dict_round_trip():
    ours, sched, _, _ = _pair("SGD", {"lr": 0.1, "momentum": 0.9},
                              {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3,
                               "mode": "triangular2"})
    for _ in range(4):
        sched.step()
    state = sched.state_dict()
    assert "_scale_fn_ref" not in state and state["_scale_fn_custom"] is None
    fresh = CyclicLR(ours, 0.01, 0.1, step_size_up=3, last_epoch=-1)
    fresh.load_state_dict(state)
    sched.step()
    fresh.step()
    assert fresh.get_last_lr() == sched.get_last_lr() and fresh.mode == "triangular2"


def test_errors_match_torch():
    for make, kwargs in [(lambda lib, p: lib.optim.SGD([p], lr=0.1), {"mode": "bad"}),
                         (lambda lib, p: lib.optim.Adagrad([p]), {})]:
        with pytest.raises(ValueError) as ref:
            torch.optim.lr_scheduler.CyclicLR(make(torch, torch.zeros(1, requires_grad=True)),
                                              0.01, 0.1, **kwargs)
        with pytest.raises(ValueError) as got:
            CyclicLR(make(tensorlib, tensorlib.zeros(1, requires_grad=True)), 0.01, 0.1,
                     **kwargs)
        assert str(got.value) == str(ref.value)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        CyclicLR(object(), 0.01, 0.1)
