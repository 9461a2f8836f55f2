"""tensorlib.optim.lr_scheduler: each scheduler's lr sequence against closed forms and
against torch.optim.lr_scheduler (skipped without torch); state_dict round trips."""
import math

import pytest

import tensorlib
import tensorlib.optim as optim
from tensorlib.optim import lr_scheduler as L

N = 40


def _opt(lr=0.1, groups=1, kind="SGD", **kw):
    params = [tensorlib.zeros(2, requires_grad=True) for _ in range(groups)]
    group_list = [{"params": [p], "lr": lr * (i + 1)} for i, p in enumerate(params)]
    return getattr(optim, kind)(group_list, lr=lr, **kw)


def _sequence(sched, n=N, metrics=None):
    out = [list(sched.get_last_lr())]
    for i in range(n):
        sched.optimizer.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        out.append(list(sched.get_last_lr()))
    return out


def _close(a, b, rel=1e-12):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x == pytest.approx(y, rel=rel, abs=1e-15), (a, b)


# ---- closed forms (no torch needed) ---------------------------------------------------------
def test_step_lr_closed_form():
    seq = _sequence(L.StepLR(_opt(groups=2), step_size=3, gamma=0.5))
    for t, lrs in enumerate(seq):
        _close(lrs, [0.1 * 0.5 ** (t // 3), 0.2 * 0.5 ** (t // 3)])


def test_multistep_lr_closed_form():
    seq = _sequence(L.MultiStepLR(_opt(), milestones=[5, 9, 9, 20], gamma=0.1))
    for t, lrs in enumerate(seq):
        k = sum(m <= t for m in [5, 9, 9, 20])
        _close(lrs, [0.1 * 0.1 ** k])


def test_exponential_lr_closed_form():
    for t, lrs in enumerate(_sequence(L.ExponentialLR(_opt(), gamma=0.9))):
        _close(lrs, [0.1 * 0.9 ** t], rel=1e-10)


def test_cosine_annealing_closed_form_within_period():
    seq = _sequence(L.CosineAnnealingLR(_opt(), T_max=10, eta_min=0.001), n=10)
    for t, lrs in enumerate(seq):
        _close(lrs, [0.001 + (0.1 - 0.001) * (1 + math.cos(math.pi * t / 10)) / 2], rel=1e-9)


def test_cosine_warm_restarts_closed_form():
    seq = _sequence(L.CosineAnnealingWarmRestarts(_opt(), T_0=3, T_mult=2, eta_min=0.01))
    # restarts at 3, 3 + 6 = 9, 9 + 12 = 21, ...
    starts, length = [0], 3
    while starts[-1] + length <= N:
        starts.append(starts[-1] + length)
        length *= 2
    for t, lrs in enumerate(seq):
        s = max(x for x in starts if x <= t)
        T_i = 3 * 2 ** starts.index(s)
        _close(lrs, [0.01 + (0.1 - 0.01) * (1 + math.cos(math.pi * (t - s) / T_i)) / 2])


def test_lambda_lr_and_linear_lr():
    seq = _sequence(L.LambdaLR(_opt(groups=2), [lambda e: 0.95 ** e, lambda e: 1 / (e + 1)]))
    for t, lrs in enumerate(seq):
        _close(lrs, [0.1 * 0.95 ** t, 0.2 / (t + 1)])
    seq = _sequence(L.LinearLR(_opt(), start_factor=0.25, end_factor=1.0, total_iters=8))
    for t, lrs in enumerate(seq):
        _close(lrs, [0.1 * (0.25 + 0.75 * min(t, 8) / 8)], rel=1e-10)


def test_onecycle_lr_endpoints_and_momentum():
    opt = _opt(kind="SGD", momentum=0.9)
    sched = L.OneCycleLR(opt, max_lr=1.0, total_steps=100)
    assert opt.param_groups[0]["lr"] == pytest.approx(1.0 / 25)
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)
    lrs = _sequence(sched, n=99)
    peak = max(range(100), key=lambda i: lrs[i][0])
    assert peak == 29 and lrs[peak][0] == pytest.approx(1.0)
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)
    assert lrs[-1][0] == pytest.approx(1.0 / 25 / 1e4)
    with pytest.raises(ValueError, match="Tried to step 101 times"):
        sched.step()
        sched.step()
    adam = _opt(kind="Adam")
    L.OneCycleLR(adam, max_lr=0.5, total_steps=10, base_momentum=0.8, max_momentum=0.9)
    assert adam.param_groups[0]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="optimizer must support momentum"):
        L.OneCycleLR(_opt(kind="Adagrad"), max_lr=0.5, total_steps=10)
    L.OneCycleLR(_opt(kind="Adagrad"), max_lr=0.5, total_steps=10, cycle_momentum=False)


def test_reduce_lr_on_plateau_rules():
    opt = _opt(groups=2)
    sched = L.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2, cooldown=1,
                                min_lr=[0.03, 0.0])
    losses = [1.0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9]
    seen = []
    for x in losses:
        sched.step(x)
        seen.append(sched.get_last_lr())
    # bad epochs after 0.9: 1, 2, 3 > patience -> reduce at step 5; one cooldown step (its bad
    # epoch is ignored), then 3 more bad epochs -> reduce at step 9 (clipped at min_lr 0.03)
    assert [s[0] for s in seen] == pytest.approx([0.1] * 4 + [0.05] * 4 + [0.03] * 4)
    assert [s[1] for s in seen] == pytest.approx([0.2] * 4 + [0.1] * 4 + [0.05] * 4)
    mx = L.ReduceLROnPlateau(_opt(), mode="max", threshold=0.1, threshold_mode="abs",
                             patience=0)
    mx.step(1.0)
    mx.step(1.05)           # not better by 0.1 in abs terms: reduce
    assert mx.get_last_lr() == pytest.approx([0.01])
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        L.ReduceLROnPlateau(_opt(), factor=1.0)
    with pytest.raises(ValueError, match="mode bad is unknown!"):
        L.ReduceLROnPlateau(_opt(), mode="bad")


def test_sequential_lr():
    opt = _opt()
    s1 = L.LinearLR(opt, start_factor=0.1, total_iters=4)
    s2 = L.ExponentialLR(opt, gamma=0.9)
    seq = _sequence(L.SequentialLR(opt, [s1, s2], milestones=[4]), n=10)
    for t, lrs in enumerate(seq):
        expected = 0.1 * (0.1 + 0.9 * t / 4) if t < 4 else 0.1 * 0.9 ** (t - 4)
        _close(lrs, [expected], rel=1e-10)
    with pytest.raises(ValueError, match="expects number of schedulers provided to be one more"):
        L.SequentialLR(opt, [s1, s2], milestones=[])


def test_scheduler_errors():
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        L.StepLR([], step_size=1)
    with pytest.raises(KeyError, match="initial_lr"):
        L.StepLR(_opt(), step_size=1, last_epoch=3)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        L.CosineAnnealingWarmRestarts(_opt(), T_0=0)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        L.LambdaLR(_opt(groups=2), [lambda e: 1.0])
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        L.OneCycleLR(_opt(), max_lr=1.0)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        L.LinearLR(_opt(), start_factor=0)


@pytest.mark.parametrize("make", [
    lambda o: L.StepLR(o, step_size=3, gamma=0.5),
    lambda o: L.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    lambda o: L.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2),
    lambda o: L.OneCycleLR(o, max_lr=1.0, total_steps=60, three_phase=True),
    lambda o: L.SequentialLR(o, [L.ConstantLR(o, factor=0.5, total_iters=2),
                                 L.ExponentialLR(o, gamma=0.8)], milestones=[5]),
], ids=["step", "cosine", "warm_restarts", "onecycle", "sequential"])
def test_state_dict_round_trip(make):
    opt_a = _opt(kind="SGD", momentum=0.9)
    a = make(opt_a)
    for _ in range(9):
        opt_a.step()
        a.step()
    # as with torch: build the scheduler, then load the optimizer's and the scheduler's state
    opt_b = _opt(kind="SGD", momentum=0.9)
    b = make(opt_b)
    opt_b.load_state_dict(opt_a.state_dict())
    b.load_state_dict(a.state_dict())
    assert "optimizer" not in a.state_dict()
    assert b.get_last_lr() == a.get_last_lr()
    for _ in range(15):
        a.step()
        b.step()
        assert b.get_last_lr() == a.get_last_lr()
        assert opt_b.param_groups[0]["lr"] == opt_a.param_groups[0]["lr"]


# ---- against torch.optim.lr_scheduler ----------------------------------------------------------
TORCH_CASES = [
    ("StepLR", dict(step_size=4, gamma=0.3)),
    ("MultiStepLR", dict(milestones=[3, 8, 8, 15], gamma=0.5)),
    ("ExponentialLR", dict(gamma=0.93)),
    ("CosineAnnealingLR", dict(T_max=9, eta_min=0.002)),      # runs past T_max (recursive form)
    ("CosineAnnealingWarmRestarts", dict(T_0=5, T_mult=1, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=3)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (1 + 0.3 * e))),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.97)),
    ("LinearLR", dict(start_factor=0.2, end_factor=0.9, total_iters=12)),
    ("ConstantLR", dict(factor=0.4, total_iters=6)),
    ("PolynomialLR", dict(total_iters=20, power=2.0)),
    ("OneCycleLR", dict(max_lr=[0.5, 0.8], total_steps=N)),
    ("OneCycleLR", dict(max_lr=0.5, epochs=4, steps_per_epoch=10, anneal_strategy="linear",
                        pct_start=0.25)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=N, three_phase=True, div_factor=10.0)),
]


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name,kw", TORCH_CASES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(TORCH_CASES)])
def test_matches_torch(name, kw, kind):
    torch = pytest.importorskip("torch")
    extra = {"momentum": 0.9} if kind == "SGD" else {}

    def torch_opt():
        ps = [torch.zeros(2, requires_grad=True) for _ in range(2)]
        return getattr(torch.optim, kind)([{"params": [ps[0]], "lr": 0.1},
                                           {"params": [ps[1]], "lr": 0.2}], lr=0.1, **extra)

    t_opt, l_opt = torch_opt(), _opt(groups=2, kind=kind, **extra)
    t_s = getattr(torch.optim.lr_scheduler, name)(t_opt, **kw)
    l_s = getattr(L, name)(l_opt, **kw)
    t_seq = [list(t_s.get_last_lr())]
    t_mom = []
    for _ in range(N - 1 if name == "OneCycleLR" else N):
        t_opt.step()
        t_s.step()
        t_seq.append(list(t_s.get_last_lr()))
        t_mom.append([g.get("momentum", g.get("betas", (None,))[0])
                      for g in t_opt.param_groups])
    l_seq = _sequence(l_s, n=len(t_seq) - 1)
    for a, b in zip(l_seq, t_seq):
        _close(a, b, rel=1e-12)
    assert [g.get("momentum", g.get("betas", (None,))[0]) for g in l_opt.param_groups] == \
        pytest.approx(t_mom[-1])


def test_sequential_and_plateau_match_torch():
    torch = pytest.importorskip("torch")
    import itertools

    def both(mk_t, mk_l):
        tp = [torch.zeros(1, requires_grad=True)]
        t_opt = torch.optim.SGD(tp, lr=0.1, momentum=0.9)
        l_opt = _opt(kind="SGD", momentum=0.9)
        return mk_t(t_opt), mk_l(l_opt)

    TL, LL = torch.optim.lr_scheduler, L
    t, l_ = both(lambda o: TL.SequentialLR(o, [TL.LinearLR(o, 0.1, total_iters=5),
                                               TL.CosineAnnealingLR(o, T_max=10),
                                               TL.StepLR(o, 3)], milestones=[5, 15]),
                 lambda o: LL.SequentialLR(o, [LL.LinearLR(o, 0.1, total_iters=5),
                                               LL.CosineAnnealingLR(o, T_max=10),
                                               LL.StepLR(o, 3)], milestones=[5, 15]))
    for _ in range(30):
        t.optimizer.step()
        t.step()
        l_.step()
        _close(l_.get_last_lr(), t.get_last_lr())
    t, l_ = both(lambda o: TL.ChainedScheduler([TL.ConstantLR(o, 0.5, total_iters=4),
                                                TL.ExponentialLR(o, 0.9)]),
                 lambda o: LL.ChainedScheduler([LL.ConstantLR(o, 0.5, total_iters=4),
                                                LL.ExponentialLR(o, 0.9)]))
    for _ in range(10):
        t.optimizer.step()
        t.step()
        l_.step()
        _close(l_.get_last_lr(), t.get_last_lr())
    metrics = [5, 4, 4.5, 4.2, 4.1, 4.0, 4.0, 3.0, 3.5, 3.5, 3.5, 3.5, 3.5, 3.4, 3.6, 3.9] * 2
    for mode, tmode in itertools.product(["min", "max"], ["rel", "abs"]):
        kw = dict(mode=mode, threshold_mode=tmode, threshold=0.05, patience=1, cooldown=2,
                  factor=0.5, min_lr=0.01)
        t, l_ = both(lambda o: TL.ReduceLROnPlateau(o, **kw),
                     lambda o: LL.ReduceLROnPlateau(o, **kw))
        for m in metrics:
            t.step(m)
            l_.step(m)
            _close(l_.get_last_lr(), t.get_last_lr())
