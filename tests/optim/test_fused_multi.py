"""The CPU's multi-tensor optimizer kernels (sgd_update_multi, adam_update_multi_capturable:
a group's parameters in one pass), used by default: against torch.optim over several steps, bitwise
against the per-parameter path they replace, and the cases that must fall back."""
import numpy as np
import pytest

import tensorlib
import tensorlib.optim as optim
from tensorlib._C.device import canonical
from tensorlib.optim import _functional as F

torch = pytest.importorskip("torch")

# large enough that the threads split one tensor (above the kernels' PARALLEL_MIN)
SHAPES = [(64, 33), (7,), (3, 5, 4), (1,), (40000,)]
STEPS = 5

SGD_CONFIGS = [dict(lr=0.1), dict(lr=0.05, momentum=0.9),
               dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
               dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
               dict(lr=0.02, momentum=0.8, dampening=0.3, weight_decay=0.1, maximize=True)]
ADAM_CONFIGS = [("Adam", dict(lr=1e-2)), ("Adam", dict(lr=1e-2, weight_decay=0.1, amsgrad=True)),
                ("Adam", dict(lr=1e-3, betas=(0.8, 0.9), maximize=True)),
                ("AdamW", dict(lr=1e-2)), ("AdamW", dict(lr=1e-2, weight_decay=0.3, amsgrad=True))]


def _data(dtype, seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(STEPS)]
    return init, grads


def _run(lib, make, init, grads):
    params = [lib.tensor(p.copy(), requires_grad=True) for p in init]
    opt = make(lib, params)
    for step in grads:
        for p, g in zip(params, step):
            p.grad = lib.tensor(g.copy())
        opt.step()
    return [p.detach().numpy() for p in params], opt


@pytest.fixture
def calls(monkeypatch):
    """Counts calls of the CPU's multi-tensor kernels."""
    counts = {}
    kernels = canonical("cpu")._kernels
    for name in ("sgd_update_multi", "adam_update_multi_capturable"):
        kernel = kernels[name]

        def counted(*args, _kernel=kernel, _name=name):
            counts[_name] = counts.get(_name, 0) + 1
            return _kernel(*args)
        monkeypatch.setitem(kernels, name, counted)
    return counts


def _per_parameter_path(monkeypatch):
    monkeypatch.setattr(F, "multi_kernel", lambda name, params, grads: None)


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("config", SGD_CONFIGS)
def test_sgd_matches_torch_and_the_per_parameter_path(dtype, config, calls, monkeypatch):
    init, grads = _data(dtype)

    def make(lib, params):
        return lib.optim.SGD(params, **config)
    got, _ = _run(tensorlib, make, init, grads)
    assert calls.get("sgd_update_multi") == STEPS         # one call per step for the group
    ref, _ = _run(torch, make, init, grads)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, **_tol(dtype))
    _per_parameter_path(monkeypatch)
    single, _ = _run(tensorlib, make, init, grads)
    for g, s in zip(got, single):
        np.testing.assert_array_equal(g, s)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,config", ADAM_CONFIGS)
def test_adam_matches_torch_and_the_per_parameter_path(dtype, name, config, calls,
                                                       monkeypatch):
    init, grads = _data(dtype, seed=1)

    def make(lib, params):
        return getattr(lib.optim, name)(params, **config)
    got, opt = _run(tensorlib, make, init, grads)
    assert calls.get("adam_update_multi_capturable") == STEPS
    ref, ref_opt = _run(torch, make, init, grads)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, **_tol(dtype))
    p0 = opt.param_groups[0]["params"][0]
    r0 = ref_opt.param_groups[0]["params"][0]
    for key in ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if config.get("amsgrad")
                                            else ()):
        np.testing.assert_allclose(opt.state[p0][key].numpy(), ref_opt.state[r0][key].numpy(),
                                   **_tol(dtype))
    _per_parameter_path(monkeypatch)
    single, _ = _run(tensorlib, make, init, grads)
    for g, s in zip(got, single):
        np.testing.assert_array_equal(g, s)


def test_adam_parameters_at_different_steps():
    """A parameter that joins later has its own step count (its own bias corrections)."""
    init, grads = _data(np.float64, seed=2)

    def run(lib):
        params = [lib.tensor(p.copy(), requires_grad=True) for p in init[:2]]
        opt = lib.optim.Adam(params, lr=0.1)
        for i, step in enumerate(grads):
            params[0].grad = lib.tensor(step[0].copy())
            params[1].grad = lib.tensor(step[1].copy()) if i >= 2 else None
            opt.step()
        return [p.detach().numpy() for p in params]
    for g, r in zip(run(tensorlib), run(torch)):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-13)


def test_falls_back_for_what_the_kernels_do_not_take(calls):
    """Mixed dtypes in a group, or a non-contiguous gradient: the per-parameter path."""
    a = tensorlib.ones(4, requires_grad=True)
    b = tensorlib.ones(4, dtype=tensorlib.float64, requires_grad=True)
    a.grad, b.grad = tensorlib.ones(4), tensorlib.ones(4, dtype=tensorlib.float64)
    optim.SGD([a, b], lr=0.5).step()
    assert "sgd_update_multi" not in calls
    np.testing.assert_array_equal(b.detach().numpy(), np.full(4, 0.5))
    w = tensorlib.ones(3, 2, requires_grad=True)
    w.grad = tensorlib.full((2, 3), 2.0).t()                 # a transposed gradient
    opt = optim.Adam([w], lr=0.1)
    opt.step()
    assert calls.get("adam_update_multi_capturable") == 1   # asked, said no
    np.testing.assert_allclose(w.detach().numpy(), np.full((3, 2), 0.9), rtol=1e-6)
