"""tensorlib.optim: each optimizer against its update rule written out in numpy (float64),
for several steps and the variants (weight decay, momentum/nesterov, maximize, amsgrad, ...),
on the single-tensor and foreach (flat) paths; plus the Optimizer API (param groups,
state_dict round trips, zero_grad, hooks, errors) and a cross-check with torch.optim."""
import copy
import math

import numpy as np
import pytest

import tensorlib
import tensorlib.optim as optim
from tensorlib.optim import _functional as F

SHAPES = [(4, 3), (3,), (2, 2, 2), (1,)]
STEPS = 12


def _data(seed=0, shapes=SHAPES, steps=STEPS):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]
    return init, grads


# ---- numpy reference rules (float64), written from the algorithms' docs --------------------
def ref_sgd(p, grads, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
            maximize=False):
    p = p.copy()
    buf = None
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum != 0:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def ref_adam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
             maximize=False, decoupled=False):
    b1, b2 = betas
    p = p.copy()
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    vmax = np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mhat = m / (1 - b1 ** t)
        if amsgrad:
            vmax = np.maximum(vmax, v)
            vhat = vmax / (1 - b2 ** t)
        else:
            vhat = v / (1 - b2 ** t)
        p = p - lr * mhat / (np.sqrt(vhat) + eps)
    return p


def ref_adamw(p, grads, weight_decay=1e-2, **kw):
    return ref_adam(p, grads, weight_decay=weight_decay, decoupled=True, **kw)


def ref_rmsprop(p, grads, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                centered=False, maximize=False):
    p = p.copy()
    v = np.zeros_like(p)
    gavg = np.zeros_like(p)
    buf = np.zeros_like(p)
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        if centered:
            gavg = alpha * gavg + (1 - alpha) * g
            avg = np.sqrt(v - gavg * gavg) + eps
        else:
            avg = np.sqrt(v) + eps
        if momentum > 0:
            buf = momentum * buf + g / avg
            p = p - lr * buf
        else:
            p = p - lr * g / avg
    return p


def ref_adagrad(p, grads, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                eps=1e-10, maximize=False):
    p = p.copy()
    s = np.full_like(p, initial_accumulator_value)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (np.sqrt(s) + eps)
    return p


def ref_adadelta(p, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
    p = p.copy()
    v = np.zeros_like(p)
    u = np.zeros_like(p)
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta
    return p


def ref_adamax(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
               maximize=False):
    b1, b2 = betas
    p = p.copy()
    m = np.zeros_like(p)
    u = np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        p = p - lr / (1 - b1 ** t) * m / u
    return p


def ref_nadam(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
              momentum_decay=4e-3, decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    p = p.copy()
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    mu_product = 1.0
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        # PyTorch keeps mu_product as a float32 0-dim tensor: its rounding is part of the rule
        mu_product = float(np.float32(np.float32(mu_product) * np.float32(mu)))
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = np.sqrt(v / (1 - b2 ** t)) + eps
        p = p - lr * (1 - mu) / (1 - mu_product) * g / denom \
            - lr * mu_next / (1 - mu_product * mu_next) * m / denom
    return p


def ref_radam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
              decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    p = p.copy()
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    rho_inf = 2 / (1 - b2) - 1
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mhat = m / (1 - b1 ** t)
        rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho_t > 5:
            r = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                          / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
            p = p - lr * mhat * r * adaptive
        else:
            p = p - lr * mhat
    return p


CASES = [
    ("SGD", ref_sgd, dict(lr=0.1)),
    ("SGD", ref_sgd, dict(lr=0.1, momentum=0.9)),
    ("SGD", ref_sgd, dict(lr=0.1, momentum=0.9, weight_decay=0.1, nesterov=True)),
    ("SGD", ref_sgd, dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01,
                          maximize=True)),
    ("Adam", ref_adam, dict()),
    ("Adam", ref_adam, dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1)),
    ("Adam", ref_adam, dict(lr=0.05, amsgrad=True, maximize=True)),
    ("Adam", ref_adam, dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", ref_adamw, dict(lr=0.05)),
    ("AdamW", ref_adamw, dict(lr=0.05, weight_decay=0.3, amsgrad=True, maximize=True)),
    ("RMSprop", ref_rmsprop, dict()),
    ("RMSprop", ref_rmsprop, dict(lr=0.01, weight_decay=0.1, momentum=0.5)),
    ("RMSprop", ref_rmsprop, dict(lr=0.01, centered=True, alpha=0.9, maximize=True)),
    ("RMSprop", ref_rmsprop, dict(lr=0.01, centered=True, momentum=0.9)),
    ("Adagrad", ref_adagrad, dict()),
    ("Adagrad", ref_adagrad, dict(lr=0.1, lr_decay=0.05, weight_decay=0.1,
                                  initial_accumulator_value=0.5, maximize=True)),
    ("Adadelta", ref_adadelta, dict()),
    ("Adadelta", ref_adadelta, dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", ref_adamax, dict()),
    ("Adamax", ref_adamax, dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, maximize=True)),
    ("NAdam", ref_nadam, dict()),
    ("NAdam", ref_nadam, dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", ref_nadam, dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True,
                              maximize=True)),
    ("RAdam", ref_radam, dict()),
    ("RAdam", ref_radam, dict(lr=0.05, weight_decay=0.1, betas=(0.8, 0.9))),
    ("RAdam", ref_radam, dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True,
                              maximize=True)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'defaults'}"
       for name, _, kw in CASES]


def _run(name, kw, init, grads, foreach, dtype=tensorlib.float64, flat=False):
    params = [tensorlib.tensor(x, dtype=dtype, requires_grad=True) for x in init]
    if flat:
        F.flatten_parameters_(params)
    opt = getattr(optim, name)(params, foreach=foreach, **kw)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = tensorlib.tensor(g, dtype=dtype)
        opt.step()
    return params, opt


def _ref_kwargs(name, kw):
    kw = dict(kw)
    if name == "Adam" and kw.pop("decoupled_weight_decay", False):
        kw["decoupled"] = True
    return kw


@pytest.mark.parametrize("foreach", [False, True], ids=["single", "foreach"])
@pytest.mark.parametrize("name,ref,kw", CASES, ids=IDS)
def test_matches_numpy_rule(name, ref, kw, foreach):
    init, grads = _data()
    params, _ = _run(name, kw, init, grads, foreach)
    for i, p in enumerate(params):
        expected = ref(init[i], [g[i] for g in grads], **_ref_kwargs(name, kw))
        np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-9, atol=1e-12)
        assert not np.allclose(expected, init[i])   # the step did move the parameter


@pytest.mark.parametrize("name,ref,kw", CASES, ids=IDS)
def test_foreach_and_flat_params_match_single_bitwise(name, ref, kw):
    """The flat path runs the same elementwise math: identical results, also when the
    parameters share one storage (the single-pass case) and in float32."""
    init, grads = _data(seed=1, steps=4)
    for dtype in (tensorlib.float64, tensorlib.float32):
        single, _ = _run(name, kw, init, grads, False, dtype)
        for flat in (False, True):
            multi, _ = _run(name, kw, init, grads, True, dtype, flat=flat)
            for a, b in zip(single, multi):
                np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_flat_path_uses_views_not_copies():
    params = [tensorlib.tensor(np.ones(s), requires_grad=True) for s in SHAPES]
    F.flatten_parameters_(params)
    flat = F.flat_view(params)
    assert flat is not None and tuple(flat.shape) == (sum(int(np.prod(s)) for s in SHAPES),)
    opt = optim.Adam(params, lr=0.1, foreach=True)
    for p in params:
        p.grad = tensorlib.ones(p.shape, dtype=tensorlib.float64)
    opt.step()
    for key in ("exp_avg", "exp_avg_sq"):
        assert F.flat_view([opt.state[p][key] for p in params]) is not None
    np.testing.assert_allclose(flat.numpy(), 1 - 0.1, rtol=1e-7)
    # the parameters still are independent leaves of their own shapes
    assert [tuple(p.shape) for p in params] == SHAPES and all(p.is_leaf for p in params)


def test_foreach_mixed_dtypes_and_missing_grads():
    init, grads = _data(steps=3)
    dtypes = [tensorlib.float32, tensorlib.float64, tensorlib.float32, tensorlib.float64]
    results = []
    for foreach in (False, True):
        params = [tensorlib.tensor(x, dtype=d, requires_grad=True) for x, d in zip(init, dtypes)]
        opt = optim.Adam(params, lr=0.1, foreach=foreach)
        for k, step_grads in enumerate(grads):
            for i, (p, g, d) in enumerate(zip(params, step_grads, dtypes)):
                # parameter 2 gets no gradient at the first step: its step count lags behind
                p.grad = None if (i == 2 and k == 0) else tensorlib.tensor(g, dtype=d)
            opt.step()
        assert opt.state[params[2]]["step"].item() == 2.0
        assert opt.state[params[0]]["step"].item() == 3.0
        results.append([p.detach().numpy() for p in params])
    for a, b in zip(*results):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(results[0][2], ref_adam(init[2], [g[2] for g in grads[1:]], lr=0.1),
                               rtol=1e-5)


# ---- Optimizer API --------------------------------------------------------------------------
def _params(seed=0):
    init, _ = _data(seed)
    return [tensorlib.tensor(x, requires_grad=True) for x in init]


def test_defaults_and_param_groups_structure():
    p = _params()
    opt = optim.SGD(p)
    assert opt.defaults == {"lr": 1e-3, "momentum": 0, "dampening": 0, "weight_decay": 0,
                            "nesterov": False, "maximize": False, "foreach": None,
                            "differentiable": False, "fused": None}
    assert len(opt.param_groups) == 1 and opt.param_groups[0]["params"] == p
    assert optim.AdamW(p).defaults["weight_decay"] == 1e-2
    assert optim.AdamW(p).defaults["decoupled_weight_decay"] is True
    assert optim.Adam(p).defaults["betas"] == (0.9, 0.999)
    assert optim.RMSprop(p).defaults["lr"] == 1e-2
    assert optim.Adagrad(p).defaults["eps"] == 1e-10
    assert optim.Adadelta(p).defaults["lr"] == 1.0
    assert optim.Adamax(p).defaults["lr"] == 2e-3
    assert optim.NAdam(p).defaults["momentum_decay"] == 4e-3
    assert isinstance(opt.state, __import__("collections").defaultdict)
    assert "Parameter Group 0" in repr(opt) and "lr: 0.001" in repr(opt)


def test_param_groups_with_different_lrs():
    init, grads = _data()
    p = [tensorlib.tensor(x, requires_grad=True) for x in init]
    opt = optim.SGD([{"params": p[:2]}, {"params": p[2:], "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    for step_grads in grads:
        for q, g in zip(p, step_grads):
            q.grad = tensorlib.tensor(g)
        opt.step()
    for i, q in enumerate(p):
        lr = 0.1 if i < 2 else 0.5
        np.testing.assert_allclose(q.detach().numpy(),
                                   ref_sgd(init[i], [g[i] for g in grads], lr=lr, momentum=0.9),
                                   rtol=1e-10)


def test_add_param_group():
    p = _params()
    opt = optim.Adam(p[:2], lr=0.1)
    opt.add_param_group({"params": p[2], "lr": 0.01})
    assert opt.param_groups[1]["params"] == [p[2]]
    assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        opt.add_param_group({"params": [p[0]]})
    with pytest.raises(TypeError, match="param_group must be a dict, but got list"):
        opt.add_param_group([p[3]])
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {p[3]}})


def test_construction_errors():
    p = _params()
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD(p, lr=-1)
    with pytest.raises(ValueError, match="Invalid momentum value: -0.5"):
        optim.SGD(p, momentum=-0.5)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero "
                                         "dampening"):
        optim.SGD(p, momentum=0.9, dampening=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0: 1.0"):
        optim.Adam(p, betas=(1.0, 0.999))
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: -0.1"):
        optim.AdamW(p, betas=(0.9, -0.1))
    with pytest.raises(ValueError, match="Invalid epsilon value: -1e-08"):
        optim.Adam(p, eps=-1e-8)
    with pytest.raises(ValueError, match="Invalid weight_decay value: -0.1"):
        optim.RMSprop(p, weight_decay=-0.1)
    with pytest.raises(ValueError, match="Invalid alpha value: -1"):
        optim.RMSprop(p, alpha=-1)
    with pytest.raises(ValueError, match="Invalid lr_decay value: -1"):
        optim.Adagrad(p, lr_decay=-1)
    with pytest.raises(ValueError, match="Invalid initial_accumulator_value value: -1"):
        optim.Adagrad(p, initial_accumulator_value=-1)
    with pytest.raises(ValueError, match="Invalid rho value: 1.5"):
        optim.Adadelta(p, rho=1.5)
    with pytest.raises(ValueError, match="Invalid momentum_decay value: -1"):
        optim.NAdam(p, momentum_decay=-1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.Adam([])
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(p[0])
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the "
                                        "params is int"):
        optim.SGD([p[0], 3])
    x = tensorlib.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([x * 2])
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        optim.Adam(p, fused=True, foreach=True)


def test_zero_grad():
    p = _params()
    opt = optim.SGD(p, lr=0.1)
    for q in p:
        q.grad = tensorlib.ones(q.shape, dtype=q.dtype)
    opt.zero_grad(set_to_none=False)
    for q in p:
        assert q.grad is not None and not q.grad.numpy().any()
    opt.zero_grad()
    assert all(q.grad is None for q in p)


def test_params_without_grad_are_skipped():
    p = _params()
    opt = optim.Adam(p, lr=0.1)
    before = [q.detach().numpy().copy() for q in p]
    p[0].grad = tensorlib.ones(p[0].shape, dtype=p[0].dtype)
    opt.step()
    assert not np.array_equal(p[0].detach().numpy(), before[0])
    for q, b in zip(p[1:], before[1:]):
        np.testing.assert_array_equal(q.detach().numpy(), b)
    assert len(opt.state) == 1


def test_step_with_closure_and_backward():
    w = tensorlib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == pytest.approx(14.0)
    np.testing.assert_allclose(w.detach().numpy(), np.array([1.0, -2.0, 3.0]) * (1 - 0.2))
    assert w.grad_fn is None and w.requires_grad


def test_tensor_lr():
    init, grads = _data(steps=3)
    p = [tensorlib.tensor(x, requires_grad=True) for x in init]
    opt = optim.Adam(p, lr=tensorlib.tensor(0.05))
    for step_grads in grads:
        for q, g in zip(p, step_grads):
            q.grad = tensorlib.tensor(g)
        opt.step()
    np.testing.assert_allclose(p[0].detach().numpy(),
                               ref_adam(init[0], [g[0] for g in grads], lr=0.05), rtol=1e-6)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        optim.SGD(p, lr=tensorlib.tensor([0.1, 0.2]))


def test_state_dict_format():
    p = _params()
    opt = optim.Adam([{"params": p[:2]}, {"params": p[2:], "lr": 0.1}], amsgrad=True)
    for q in p:
        q.grad = tensorlib.ones(q.shape, dtype=q.dtype)
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sorted(sd["state"]) == [0, 1, 2, 3]
    assert list(sd["state"][0]) == ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]
    assert sd["state"][0]["step"].item() == 1.0 and sd["state"][0]["step"].dtype == \
        tensorlib.float32 and tuple(sd["state"][0]["step"].shape) == ()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2, 3]]
    assert list(sd["param_groups"][0]) == ["lr", "betas", "eps", "weight_decay", "amsgrad",
                                           "maximize", "foreach", "capturable",
                                           "differentiable", "fused",
                                           "decoupled_weight_decay", "params"]
    assert sd["param_groups"][1]["lr"] == 0.1


def test_state_dict_matches_torch_layout():
    torch = pytest.importorskip("torch")
    for name, kw in [("SGD", dict(momentum=0.9)), ("Adam", dict(amsgrad=True)),
                     ("AdamW", {}), ("RMSprop", dict(momentum=0.5, centered=True)),
                     ("Adagrad", {}), ("Adadelta", {}), ("Adamax", {}), ("NAdam", {}),
                     ("RAdam", {})]:
        tp = [torch.zeros(2, requires_grad=True)]
        lp = [tensorlib.zeros(2, requires_grad=True)]
        to, lo = getattr(torch.optim, name)(tp, **kw), getattr(optim, name)(lp, **kw)
        tp[0].grad = torch.ones(2)
        lp[0].grad = tensorlib.ones(2)
        to.step()
        lo.step()
        tsd, lsd = to.state_dict(), lo.state_dict()
        assert list(tsd["param_groups"][0]) == list(lsd["param_groups"][0]), name
        assert {k: v for k, v in tsd["param_groups"][0].items()} == \
            {k: v for k, v in lsd["param_groups"][0].items()}, name
        assert list(tsd["state"][0]) == list(lsd["state"][0]), name
        for key, value in tsd["state"][0].items():
            np.testing.assert_allclose(lsd["state"][0][key].numpy(), value.numpy(), rtol=1e-6)


def _snapshot(sd):
    """What saving and loading a checkpoint gives: the same structure, tensors copied.
    (copy.deepcopy of tensors is not supported by tensorlib yet.)"""
    def copy_value(v):
        if isinstance(v, tensorlib.Tensor):
            return v.clone()
        if isinstance(v, dict):
            return {k: copy_value(x) for k, x in v.items()}
        if isinstance(v, list):
            return [copy_value(x) for x in v]
        return copy.copy(v)
    return copy_value(sd)


@pytest.mark.parametrize("foreach", [False, True], ids=["single", "foreach"])
@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)),
                                     ("Adam", dict(lr=0.05, amsgrad=True)),
                                     ("AdamW", dict(lr=0.05)),
                                     ("RMSprop", dict(momentum=0.5, centered=True)),
                                     ("Adagrad", dict(lr=0.1)), ("Adadelta", {}),
                                     ("Adamax", {}), ("NAdam", {}), ("RAdam", {})])
def test_state_dict_round_trip_continues_identically(name, kw, foreach):
    init, grads = _data(seed=3, steps=8)

    def feed(params, step_grads):
        for q, g in zip(params, step_grads):
            q.grad = tensorlib.tensor(g)

    a = [tensorlib.tensor(x, requires_grad=True) for x in init]
    opt_a = getattr(optim, name)(a, foreach=foreach, **kw)
    for step_grads in grads[:4]:
        feed(a, step_grads)
        opt_a.step()
    saved = _snapshot(opt_a.state_dict())
    # a fresh optimizer over copies of the parameters, loaded from the saved state
    b = [tensorlib.tensor(q.detach().numpy(), requires_grad=True) for q in a]
    opt_b = getattr(optim, name)(b, foreach=foreach, **kw)
    opt_b.load_state_dict(saved)
    assert opt_b.param_groups[0]["params"] == b
    for step_grads in grads[4:]:
        feed(a, step_grads)
        feed(b, step_grads)
        opt_a.step()
        opt_b.step()
    for x, y in zip(a, b):
        if name == "NAdam":
            # as in PyTorch, loading casts the float32 `mu_product` to the parameters' float64
            np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-10)
        else:
            np.testing.assert_array_equal(x.detach().numpy(), y.detach().numpy())
    # loading copied the state: the two optimizers share no buffers
    sa, sb = opt_a.state[a[0]], opt_b.state[b[0]]
    for key in sa:
        if hasattr(sa[key], "_storage"):
            assert sa[key]._storage is not sb[key]._storage


def test_load_state_dict_casts_and_validates():
    p32 = [tensorlib.zeros(3, dtype=tensorlib.float32, requires_grad=True)]
    p64 = [tensorlib.zeros(3, dtype=tensorlib.float64, requires_grad=True)]
    src = optim.Adam(p64, lr=0.1)
    p64[0].grad = tensorlib.ones(3, dtype=tensorlib.float64)
    src.step()
    dst = optim.Adam(p32, lr=0.5)
    dst.load_state_dict(src.state_dict())
    assert dst.state[p32[0]]["exp_avg"].dtype == tensorlib.float32
    assert dst.state[p32[0]]["step"].dtype == tensorlib.float32
    assert dst.param_groups[0]["lr"] == 0.1
    with pytest.raises(ValueError, match="loaded state dict has a different number of "
                                         "parameter groups"):
        optim.Adam([{"params": p32}, {"params": p64}]).load_state_dict(src.state_dict())
    two = [tensorlib.zeros(3, requires_grad=True), tensorlib.zeros(3, requires_grad=True)]
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.Adam(two).load_state_dict(src.state_dict())


def test_step_hooks():
    p = _params()
    opt = optim.SGD(p, lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o)))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o)))
    opt.step()
    assert calls == [("pre", opt), ("post", opt)]
    h1.remove()
    opt.step()
    assert calls[2:] == [("post", opt)]


def test_maximize_ascends():
    w = tensorlib.tensor([0.0], requires_grad=True)
    opt = optim.Adam([w], lr=0.1, maximize=True)
    for _ in range(5):
        opt.zero_grad()
        loss = -(w - 1.0) * (w - 1.0)
        loss.sum().backward()
        opt.step()
    assert 0.3 < w.item() < 1.2


def test_sgd_no_momentum_keeps_no_state():
    p = _params()
    opt = optim.SGD(p, lr=0.1)
    for q in p:
        q.grad = tensorlib.ones(q.shape, dtype=q.dtype)
    opt.step()
    assert len(opt.state) == 0


def test_optimizer_on_device(device):
    init, grads = _data(steps=4)
    p = [tensorlib.tensor(x, requires_grad=True, device=device) for x in init]
    for foreach in (False, True):
        q = [tensorlib.tensor(x, requires_grad=True, device=device) for x in init]
        opt = optim.Adam(q, lr=0.05, weight_decay=0.1, foreach=foreach)
        for step_grads in grads:
            for t, g in zip(q, step_grads):
                t.grad = tensorlib.tensor(g, device=device)
            opt.step()
        assert q[0].device == p[0].device
        np.testing.assert_allclose(q[0].cpu().detach().numpy(),
                                   ref_adam(init[0], [g[0] for g in grads], lr=0.05,
                                            weight_decay=0.1), rtol=1e-9)


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                     ("Adam", dict(amsgrad=True, weight_decay=0.1)),
                                     ("AdamW", {}), ("RMSprop", dict(centered=True)),
                                     ("Adagrad", dict(lr_decay=0.1)), ("Adadelta", {}),
                                     ("Adamax", {}), ("NAdam", dict(weight_decay=0.1)),
                                     ("RAdam", dict(weight_decay=0.1))])
def test_matches_torch_optim(name, kw):
    torch = pytest.importorskip("torch")
    init, grads = _data(seed=5)
    tp = [torch.tensor(x, requires_grad=True) for x in init]
    to = getattr(torch.optim, name)(tp, foreach=False, **kw)
    lp, _ = _run(name, kw, init, grads, foreach=True)
    for step_grads in grads:
        for q, g in zip(tp, step_grads):
            q.grad = torch.tensor(g)
        to.step()
    for a, b in zip(lp, tp):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12,
                                   atol=1e-14)


def test_a_wrapper_subclass_that_skips_init_can_step():
    # gradient-surgery wrappers subclass Optimizer for its interface but hold another
    # optimizer and never run Optimizer.__init__: their step has no hook tables to read
    w = tensorlib.nn.Parameter(tensorlib.ones(2))

    class Wrapper(tensorlib.optim.Optimizer):
        def __init__(self, inner):
            self.inner = inner

        def step(self):
            return self.inner.step()

    opt = Wrapper(tensorlib.optim.SGD([w], lr=0.5))
    w.grad = tensorlib.ones(2)
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), [0.5, 0.5])
