"""Losses (functional and modules): forward and gradients against PyTorch in float64, every
reduction, gradcheck, PyTorch's errors, legacy size_average/reduce, state_dict and repr."""
import math
import warnings

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(7)
REDUCTIONS = ["none", "mean", "sum"]


def _t(a, grad=False):
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return tensorlib.tensor(a, requires_grad=grad)
    return tensorlib.tensor(a)


def _th(a, grad=False):
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return torch.tensor(a, requires_grad=grad)
    return torch.tensor(a)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def compare(name, args, kwargs=None, grad_args=(0,), rtol=1e-10, atol=1e-12, tl_name=None,
            grad_rtol=1e-8):
    """Run F.<name> on both libraries (numpy arrays converted; float arrays at grad_args
    require grad) and compare the result and the gradients of sum(result * w)."""
    kwargs = kwargs or {}
    ta = [_t(a, i in grad_args) for i, a in enumerate(args)]
    pa = [_th(a, i in grad_args) for i, a in enumerate(args)]
    tk = {k: (_t(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    pk = {k: (_th(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = getattr(F, tl_name or name)(*ta, **tk)
        ref = getattr(TF, name)(*pa, **pk)
    np.testing.assert_allclose(_np(out), _np(ref), rtol=rtol, atol=atol)
    assert tuple(out.shape) == tuple(ref.shape)
    if not grad_args:
        return out
    w = RNG.standard_normal(tuple(ref.shape))
    (out * tensorlib.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    for i in grad_args:
        np.testing.assert_allclose(_np(ta[i].grad), _np(pa[i].grad), rtol=grad_rtol,
                                   atol=grad_rtol * 1e-2)
    return out


def randn(*shape):
    return RNG.standard_normal(shape)


def labels(n, c, *rest):
    return RNG.integers(0, c, size=(n,) + rest).astype(np.int64)


def sign_target(*shape):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


# ---- forward + grad parity for every loss and reduction -------------------------------------
CASES = {
    "l1_loss": lambda: ((randn(3, 4), randn(3, 4)), {}),
    "mse_loss": lambda: ((randn(3, 4), randn(3, 4)), {}),
    "smooth_l1_loss": lambda: ((randn(3, 4), randn(3, 4)), {"beta": 0.7}),
    "smooth_l1_loss_beta0": lambda: ((randn(3, 4), randn(3, 4)), {"beta": 0.0}),
    "huber_loss": lambda: ((randn(3, 4) * 2, randn(3, 4)), {"delta": 0.8}),
    "nll_loss": lambda: ((randn(5, 4), labels(5, 4)), {}),
    "cross_entropy": lambda: ((randn(5, 4), labels(5, 4)), {}),
    "binary_cross_entropy": lambda: ((RNG.uniform(0.05, 0.95, (3, 4)),
                                      RNG.uniform(0, 1, (3, 4))), {}),
    "binary_cross_entropy_with_logits": lambda: ((randn(3, 4) * 3, RNG.uniform(0, 1, (3, 4))),
                                                 {}),
    "kl_div": lambda: ((np.log(RNG.uniform(0.1, 1, (3, 4))), RNG.uniform(0, 1, (3, 4))), {}),
    "poisson_nll_loss": lambda: ((randn(3, 4), RNG.poisson(2, (3, 4)).astype(float)), {}),
    "gaussian_nll_loss": lambda: ((randn(3, 4), randn(3, 4), RNG.uniform(0.2, 2, (3, 4))), {}),
    "cosine_embedding_loss": lambda: ((randn(5, 3), randn(5, 3), sign_target(5)),
                                      {"margin": 0.1}),
    "margin_ranking_loss": lambda: ((randn(6), randn(6), sign_target(6)), {"margin": 0.2}),
    "hinge_embedding_loss": lambda: ((randn(3, 4), sign_target(3, 4)), {"margin": 0.5}),
    "soft_margin_loss": lambda: ((randn(3, 4), sign_target(3, 4)), {}),
    "multilabel_soft_margin_loss": lambda: ((randn(3, 4),
                                             (RNG.random((3, 4)) < 0.5).astype(float)), {}),
    "multi_margin_loss": lambda: ((randn(5, 4), labels(5, 4)), {}),
    "multilabel_margin_loss": lambda: ((randn(3, 4), np.array([[3, 0, -1, 1], [1, 2, 3, 0],
                                                               [-1, 1, 1, 1]])), {}),
    "triplet_margin_loss": lambda: ((randn(4, 3), randn(4, 3), randn(4, 3)), {}),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_matches_torch(case, reduction):
    args, kwargs = CASES[case]()
    name = case.replace("_beta0", "")
    grads = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")
    if name in ("cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
                "soft_margin_loss"):
        grads = grads[:-1]          # the +-1 target
    compare(name, args, dict(kwargs, reduction=reduction), grad_args=grads)


def test_l1_mse_huber_weight():
    x, y, w = randn(3, 4), randn(3, 4), RNG.uniform(0.1, 2, (3, 4))
    for name in ("l1_loss", "mse_loss", "huber_loss"):
        for r in REDUCTIONS:
            compare(name, (x, y), {"weight": w, "reduction": r})
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        F.mse_loss(_t(x), _t(y), weight=_t(w[0]))


def test_target_size_warning_and_broadcast():
    x, y = randn(3, 4), randn(1, 4)
    with pytest.warns(UserWarning, match="different to the input size"):
        out = F.mse_loss(_t(x), _t(y))
    np.testing.assert_allclose(out.item(), ((x - y) ** 2).mean())


# ---- cross entropy / nll variants -----------------------------------------------------------
CE_VARIANTS = [
    {},
    {"weight": "w"},
    {"ignore_index": 1},
    {"weight": "w", "ignore_index": 2},
    {"label_smoothing": 0.2},
    {"label_smoothing": 0.3, "weight": "w"},
    {"label_smoothing": 0.1, "weight": "w", "ignore_index": 0},
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("variant", range(len(CE_VARIANTS)))
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 2, 3), (4,)])
def test_cross_entropy_variants(shape, variant, reduction):
    kw = dict(CE_VARIANTS[variant], reduction=reduction)
    c = shape[0] if len(shape) == 1 else shape[1]
    if kw.get("weight") == "w":
        kw["weight"] = RNG.uniform(0.2, 2, c)
    x = randn(*shape)
    if len(shape) == 1:
        t = np.array(RNG.integers(0, c), dtype=np.int64)
        if "ignore_index" in kw:
            t = np.array(kw["ignore_index"] + 1, dtype=np.int64)
    else:
        t = RNG.integers(0, c, size=(shape[0],) + shape[2:]).astype(np.int64)
    compare("cross_entropy", (x, t), kw)
    if "label_smoothing" not in kw:
        compare("nll_loss", (x, t), kw)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kw", [{}, {"weight": True}, {"label_smoothing": 0.25},
                                {"weight": True, "label_smoothing": 0.1}])
def test_cross_entropy_probability_targets(kw, reduction):
    x = randn(5, 3, 2)
    p = RNG.uniform(0, 1, (5, 3, 2))
    p /= p.sum(1, keepdims=True)
    kw = dict(kw, reduction=reduction)
    if kw.pop("weight", False):
        kw["weight"] = RNG.uniform(0.5, 2, 3)
    compare("cross_entropy", (x, p), kw, grad_args=(0, 1))


def test_nll_mean_divides_by_weight_sum_of_non_ignored():
    x = randn(4, 3)
    t = np.array([0, 2, 1, 2])
    w = np.array([1.0, 2.0, 3.0])
    out = F.nll_loss(_t(x), _t(t), weight=_t(w), ignore_index=1).item()
    keep = t != 1
    expect = -(x[np.arange(4), t] * w[t])[keep].sum() / w[t][keep].sum()
    assert out == pytest.approx(expect, rel=1e-12)
    # every target ignored: 0 / 0 = nan, as PyTorch
    assert math.isnan(F.nll_loss(_t(x), _t(np.array([1, 1, 1, 1])), ignore_index=1).item())


def test_cross_entropy_stable_for_huge_logits():
    x = np.array([[1000.0, 0.0, -1000.0], [-500.0, 500.0, 0.0]])
    t = np.array([0, 2])
    compare("cross_entropy", (x, t), {"reduction": "none"})


def test_cross_entropy_float32():
    x = RNG.standard_normal((8, 5)).astype(np.float32)
    t = labels(8, 5)
    compare("cross_entropy", (x, t), {}, rtol=1e-5, atol=1e-6, grad_rtol=1e-5)


def _gc(fn, *arrays):
    ts = [tensorlib.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(fn, tuple(ts))


def test_cross_entropy_gradcheck_variants():
    x = randn(4, 3)
    t = _t(np.array([0, 2, 1, 1]))
    w = _t(np.array([0.5, 2.0, 1.5]))
    _gc(lambda x: F.cross_entropy(x, t), x)
    _gc(lambda x: F.cross_entropy(x, t, weight=w), x)
    _gc(lambda x: F.cross_entropy(x, t, ignore_index=1), x)
    _gc(lambda x: F.cross_entropy(x, t, weight=w, ignore_index=2, label_smoothing=0.2), x)
    _gc(lambda x: F.cross_entropy(x, t, label_smoothing=0.3, reduction="sum"), x)
    p = RNG.uniform(0, 1, (4, 3))
    _gc(lambda x, p: F.cross_entropy(x, p, label_smoothing=0.1), x, p)
    x4 = randn(2, 3, 2, 2)
    t4 = _t(labels(2, 3, 2, 2))
    _gc(lambda x: F.cross_entropy(x, t4, weight=w), x4)
    _gc(lambda x: F.nll_loss(x, t, weight=w, ignore_index=0), x)


def test_loss_gradchecks():
    x, y = randn(2, 3), randn(2, 3)
    pm = sign_target(2, 3)
    _gc(F.l1_loss, x, y)
    _gc(F.mse_loss, x, y)
    _gc(lambda a, b: F.smooth_l1_loss(a, b, beta=0.5), x, y)
    _gc(lambda a, b: F.huber_loss(a, b, delta=0.5), x, y)
    p, q = RNG.uniform(0.1, 0.9, (2, 3)), RNG.uniform(0, 1, (2, 3))
    wt = _t(RNG.uniform(0.5, 1.5, (2, 3)))
    _gc(lambda a, b: F.binary_cross_entropy(a, b, weight=wt), p, q)
    pw = _t(np.array([0.5, 2.0, 3.0]))
    _gc(lambda a, b: F.binary_cross_entropy_with_logits(a, b, weight=wt, pos_weight=pw), x, q)
    _gc(lambda a, b: F.kl_div(a, b, reduction="batchmean"), np.log(p), q)
    _gc(lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True), x, y)
    _gc(lambda a, b: F.poisson_nll_loss(a, b), x, q * 3)
    _gc(lambda a: F.poisson_nll_loss(a, _t(np.array([[0.0, 2.0, 5.0]] * 2)), log_input=False,
                                     full=True), p)
    _gc(lambda a, b, v: F.gaussian_nll_loss(a, b, v, full=True), x, y, p)
    tp = _t(pm)
    _gc(lambda a: F.hinge_embedding_loss(a, tp), x)
    _gc(lambda a: F.soft_margin_loss(a, tp), x)
    _gc(lambda a: F.multilabel_soft_margin_loss(a, _t((q > 0.5).astype(float)),
                                                weight=_t(np.array([1.0, 2.0, 0.5]))), x)
    t1 = _t(np.array([1.0, -1.0]))
    _gc(lambda a, b: F.cosine_embedding_loss(a, b, t1, margin=-0.5), x, y)
    _gc(lambda a, b: F.margin_ranking_loss(a, b, tp, margin=0.1), x, y)
    tm = _t(np.array([2, 0]))
    _gc(lambda a: F.multi_margin_loss(a, tm, p=2, weight=_t(np.array([1.0, 2.0, 3.0]))), x)
    _gc(lambda a: F.multilabel_margin_loss(a, _t(np.array([[2, 0, -1], [1, -1, 0]]))), x)
    _gc(lambda a, b, c: F.triplet_margin_loss(a, b, c, margin=2.0, swap=True), x, y, x + 0.7)


def test_binary_cross_entropy_clamps_log():
    x = np.array([0.0, 1.0, 0.5, 1.0])
    y = np.array([1.0, 0.0, 0.5, 1.0])
    compare("binary_cross_entropy", (x, y), {"reduction": "none"}, grad_args=())
    out = F.binary_cross_entropy(_t(x), _t(y), reduction="none").numpy()
    assert out[0] == 100 and out[1] == 100
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(_t(np.array([1.5])), _t(np.array([1.0])))
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(_t(np.array([0.5, 0.5])), _t(np.array([1.0])))


@pytest.mark.parametrize("reduction", ["sum", "mean", "none"])
def test_binary_cross_entropy_gradients_at_zero_and_one_match_torch(reduction):
    """PyTorch's own formulas, finite where x is 0 or 1 (the chain rule through the clamped
    logs gave NaN there); first and second derivatives in x, t and the incoming gradient."""
    x = np.array([0.5, 1.0, 0.0, 0.3, 1e-7, 0.9])
    t = np.array([0.0, 1.0, 0.0, 0.7, 0.2, 1.0])
    w = np.array([1.0, 2.0, 3.0, 0.5, 1.0, 1.5])
    v = np.arange(1.0, 7.0)
    results = []
    for lib, make in ((tensorlib, _t), (torch, _th)):
        xs, ts, go = make(x, True), make(t, True), make(np.array(2.0), True)
        loss = lib.nn.functional.binary_cross_entropy(xs, ts, weight=make(w),
                                                      reduction=reduction)
        loss = loss.sum() * go
        gx, gt = lib.autograd.grad(loss, (xs, ts), create_graph=True)
        second = lib.autograd.grad((gx * make(v)).sum(), (xs, ts, go))
        results.append([g.detach().numpy() for g in (gx, gt, *second)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert np.isfinite(results[0][0]).all()


def test_binary_cross_entropy_gradgradcheck():
    p, q = RNG.uniform(0.1, 0.9, (2, 3)), RNG.uniform(0, 1, (2, 3))
    wt = _t(RNG.uniform(0.5, 1.5, (2, 3)))
    args = tuple(tensorlib.tensor(a, requires_grad=True) for a in (p, q))
    assert tensorlib.autograd.gradgradcheck(
        lambda a, b: F.binary_cross_entropy(a, b, weight=wt), args)


def test_bce_with_logits_stable_and_pos_weight():
    x = np.array([[-200.0, -30.0, 0.0, 30.0, 200.0]])
    y = np.array([[1.0, 0.0, 0.5, 1.0, 0.0]])
    compare("binary_cross_entropy_with_logits", (x, y), {"reduction": "none"})
    pw = np.array([0.5, 1.0, 2.0, 3.0, 4.0])
    compare("binary_cross_entropy_with_logits", (randn(3, 5), RNG.uniform(0, 1, (3, 5))),
            {"pos_weight": pw, "weight": RNG.uniform(0, 1, (1, 5))})
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(_t(randn(2)), _t(randn(3)))
    # gradient at exactly 0: sigmoid(0) - y
    z = tensorlib.zeros(2, dtype=tensorlib.float64, requires_grad=True)
    F.binary_cross_entropy_with_logits(z, _t(np.array([1.0, 0.0])), reduction="sum").backward()
    np.testing.assert_allclose(z.grad.numpy(), [-0.5, 0.5])


def test_kl_div_reductions_and_zero_targets():
    x = np.log(RNG.uniform(0.1, 1, (4, 3)))
    y = RNG.uniform(0, 1, (4, 3))
    y[0, 1] = 0.0
    # (PyTorch's gradient for a target of exactly 0 is nan; ours is finite: input only)
    compare("kl_div", (x, y), {"reduction": "batchmean"}, grad_args=(0,))
    compare("kl_div", (x, y + 0.1), {"reduction": "batchmean"}, grad_args=(0, 1))
    compare("kl_div", (x, np.log(y + 0.1)), {"reduction": "sum", "log_target": True},
            grad_args=(0, 1))
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(_t(x), _t(y))


def test_poisson_full_and_not_log_input():
    x = RNG.uniform(0.1, 3, (3, 4))
    y = RNG.poisson(3, (3, 4)).astype(float)
    for r in REDUCTIONS:
        compare("poisson_nll_loss", (x, y), {"log_input": False, "full": True, "reduction": r})
    compare("poisson_nll_loss", (randn(3, 4), y), {"full": True})


def test_gaussian_nll_shapes_and_errors():
    x, y = randn(4, 3), randn(4, 3)
    compare("gaussian_nll_loss", (x, y, RNG.uniform(0.5, 1, 4)), {}, grad_args=(0, 2))
    compare("gaussian_nll_loss", (x, y, RNG.uniform(0.5, 1, (4, 1))), {"full": True},
            grad_args=(0, 2))
    compare("gaussian_nll_loss", (x, y, np.array([1e-9, 1.0, 2.0])[None].repeat(4, 0)),
            {"reduction": "sum"}, grad_args=(0, 2))
    with pytest.raises(ValueError, match="incorrect size"):
        F.gaussian_nll_loss(_t(x), _t(y), _t(RNG.uniform(0.5, 1, (2, 2))))
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(_t(x), _t(y), _t(-np.ones((4, 3))))
    with pytest.raises(ValueError, match="is not valid"):
        F.gaussian_nll_loss(_t(x), _t(y), _t(np.ones((4, 3))), reduction="avg")


def test_unbatched_margin_losses():
    compare("multi_margin_loss", (randn(4), np.array(2)), {"reduction": "none"})
    compare("multilabel_margin_loss", (randn(4), np.array([3, 1, -1, 2])),
            {"reduction": "none"})
    compare("cosine_embedding_loss", (randn(4), randn(4), np.array(-1.0)),
            {"reduction": "none"}, grad_args=(0, 1))
    compare("triplet_margin_loss", (randn(5), randn(5), randn(5)),
            {"reduction": "none", "p": 1, "swap": True}, grad_args=(0, 1, 2))


def test_multi_margin_p2_weight_margin():
    for r in REDUCTIONS:
        compare("multi_margin_loss", (randn(5, 4), labels(5, 4)),
                {"p": 2, "margin": 0.7, "weight": RNG.uniform(0.5, 2, 4), "reduction": r})


def test_triplet_with_distance():
    a, p, n = randn(4, 3), randn(4, 3), randn(4, 3)
    compare("triplet_margin_with_distance_loss", (a, p, n), {}, grad_args=(0, 1, 2))
    tl_d = lambda x, y: 1.0 - F.cosine_similarity(x, y)  # noqa: E731
    th_d = lambda x, y: 1.0 - TF.cosine_similarity(x, y)  # noqa: E731
    out = F.triplet_margin_with_distance_loss(_t(a), _t(p), _t(n), distance_function=tl_d,
                                              swap=True, margin=0.5)
    ref = TF.triplet_margin_with_distance_loss(_th(a), _th(p), _th(n), distance_function=th_d,
                                               swap=True, margin=0.5)
    assert out.item() == pytest.approx(ref.item(), rel=1e-12)


# ---- CTC ------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("concat", [False, True])
def test_ctc_loss_matches_torch(reduction, concat):
    steps, batch, classes = 7, 3, 4
    logits = randn(steps, batch, classes)
    tg_len = [3, 0, 2]
    in_len = [7, 5, 6]
    padded = np.array([[1, 2, 2], [0, 0, 0], [3, 1, 0]])
    targets = (np.concatenate([padded[i, :tg_len[i]] for i in range(batch)]) if concat
               else padded)
    x_t = tensorlib.tensor(logits, requires_grad=True)
    x_p = torch.tensor(logits, requires_grad=True)
    out = F.ctc_loss(F.log_softmax(x_t, 2), _t(targets), in_len, tg_len, reduction=reduction)
    ref = TF.ctc_loss(TF.log_softmax(x_p, 2), torch.tensor(targets), in_len, tg_len,
                      reduction=reduction)
    np.testing.assert_allclose(_np(out), _np(ref), rtol=1e-10)
    w = RNG.standard_normal(tuple(ref.shape))
    (out * tensorlib.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x_t.grad.numpy(), x_p.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_ctc_impossible_and_gradcheck():
    lp = F.log_softmax(tensorlib.tensor(randn(2, 1, 3)), 2)
    tg = tensorlib.tensor([[1, 1]])       # needs 3 frames (a blank between the repeats)
    out = F.ctc_loss(lp, tg, [2], [2], reduction="none")
    assert math.isinf(out.item())
    assert F.ctc_loss(lp, tg, [2], [2], reduction="sum", zero_infinity=True).item() == 0
    x = tensorlib.tensor(randn(4, 2, 3), requires_grad=True)
    tg = tensorlib.tensor([[1, 2], [2, 0]])
    assert gradcheck(lambda x: F.ctc_loss(x, tg, [4, 3], [2, 1]), (x,))
    m = nn.CTCLoss(blank=0)
    assert m(F.log_softmax(x, 2), tg, tensorlib.tensor([4, 3]), tensorlib.tensor([2, 1])).dim() \
        == 0


# ---- errors ---------------------------------------------------------------------------------
LOSS_CALLS = {
    "l1_loss": lambda r: F.l1_loss(_t(randn(2)), _t(randn(2)), reduction=r),
    "mse_loss": lambda r: F.mse_loss(_t(randn(2)), _t(randn(2)), reduction=r),
    "smooth_l1_loss": lambda r: F.smooth_l1_loss(_t(randn(2)), _t(randn(2)), reduction=r),
    "huber_loss": lambda r: F.huber_loss(_t(randn(2)), _t(randn(2)), reduction=r),
    "nll_loss": lambda r: F.nll_loss(_t(randn(2, 3)), _t(labels(2, 3)), reduction=r),
    "cross_entropy": lambda r: F.cross_entropy(_t(randn(2, 3)), _t(labels(2, 3)),
                                               reduction=r),
    "bce": lambda r: F.binary_cross_entropy(_t(np.full(2, 0.5)), _t(np.ones(2)), reduction=r),
    "bce_logits": lambda r: F.binary_cross_entropy_with_logits(_t(randn(2)), _t(np.ones(2)),
                                                               reduction=r),
    "kl_div": lambda r: F.kl_div(_t(randn(2)), _t(np.ones(2)), reduction=r),
    "poisson": lambda r: F.poisson_nll_loss(_t(randn(2)), _t(np.ones(2)), reduction=r),
    "hinge": lambda r: F.hinge_embedding_loss(_t(randn(2)), _t(np.ones(2)), reduction=r),
    "soft_margin": lambda r: F.soft_margin_loss(_t(randn(2)), _t(np.ones(2)), reduction=r),
    "multilabel_soft": lambda r: F.multilabel_soft_margin_loss(_t(randn(2, 2)),
                                                               _t(np.ones((2, 2))),
                                                               reduction=r),
    "margin_ranking": lambda r: F.margin_ranking_loss(_t(randn(2)), _t(randn(2)),
                                                      _t(np.ones(2)), reduction=r),
    "triplet": lambda r: F.triplet_margin_loss(_t(randn(2, 2)), _t(randn(2, 2)),
                                               _t(randn(2, 2)), reduction=r),
    "ctc": lambda r: F.ctc_loss(_t(randn(3, 1, 3)), tensorlib.tensor([[1]]), [3], [1],
                                reduction=r),
}


@pytest.mark.parametrize("call", sorted(LOSS_CALLS))
def test_bad_reduction_is_value_error(call):
    with pytest.raises(ValueError, match="not a valid value for reduction|is not valid"):
        LOSS_CALLS[call]("avg")


def test_class_target_errors():
    x = _t(randn(3, 4))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got "
                                           "Float"):
        F.nll_loss(x, _t(np.array([1.0, 2.0, 3.0], dtype=np.float32)))
    with pytest.raises(RuntimeError, match="Long or Byte, but got Int"):
        F.cross_entropy(x, tensorlib.tensor([1, 2, 3], dtype=tensorlib.int32))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(2\)"):
        F.cross_entropy(x, _t(np.array([1, 2])))
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.nll_loss(x, _t(np.array([1, 2, 7])))
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        F.cross_entropy(x, _t(np.array([1, 2, -1])))
    with pytest.raises(RuntimeError, match=r"weight tensor should be defined either for all 4 "
                                           r"classes or no classes but got weight tensor of "
                                           r"shape: \[3\]"):
        F.cross_entropy(x, _t(np.array([1, 2, 1])), weight=_t(np.ones(3)))
    with pytest.raises(RuntimeError, match=r"Expected target size \[3, 5\], got \[3, 4\]"):
        F.nll_loss(_t(randn(3, 4, 5)), _t(labels(3, 4, 4)))
    with pytest.raises(RuntimeError, match="Expected floating point type for target with "
                                           "class probabilities, got Long"):
        F.cross_entropy(x, tensorlib.ones((3, 4), dtype=tensorlib.int64))
    with pytest.raises(RuntimeError, match="ignore_index is not supported"):
        F.cross_entropy(x, _t(np.ones((3, 4))), ignore_index=1)
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, _t(np.array([1, 2, 1])), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, _t(np.array([1, 2, 5])))


def test_shape_errors_name_sizes():
    with pytest.raises(RuntimeError, match=r"margin_ranking_loss : All input tensors should "
                                           r"have same dimension"):
        F.margin_ranking_loss(_t(randn(3)), _t(randn(3)), _t(randn(3, 1)))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        F.cosine_embedding_loss(_t(randn(3, 2)), _t(randn(3, 2)), _t(np.ones((3, 1))))
    with pytest.raises(RuntimeError, match=r"1D target tensor expects 2D input tensors, but "
                                           r"found inputs with sizes \[3\] and \[3\]"):
        F.cosine_embedding_loss(_t(randn(3)), _t(randn(3)), _t(np.ones(3)))
    with pytest.raises(RuntimeError, match="anchor 2D, positive 1D, and negative 2D"):
        F.triplet_margin_loss(_t(randn(3, 2)), _t(randn(2)), _t(randn(3, 2)))
    with pytest.raises(RuntimeError, match="size of tensor a"):
        with pytest.warns(UserWarning):
            F.l1_loss(_t(randn(3, 4)), _t(randn(4, 4)))
    with pytest.raises(RuntimeError, match="negative values for beta"):
        F.smooth_l1_loss(_t(randn(3)), _t(randn(3)), beta=-1)
    with pytest.raises(RuntimeError, match="non-positive values for delta"):
        F.huber_loss(_t(randn(3)), _t(randn(3)), delta=0)


def test_legacy_size_average_reduce():
    x, y = randn(3, 4), randn(3, 4)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        out = F.mse_loss(_t(x), _t(y), size_average=False)
    assert out.item() == pytest.approx(((x - y) ** 2).sum())
    with pytest.warns(UserWarning, match="reduction='none'"):
        out = F.l1_loss(_t(x), _t(y), reduce=False)
    assert out.shape == (3, 4)
    with pytest.warns(UserWarning):
        m = nn.MSELoss(size_average=False)
    assert m.reduction == "sum"
    with pytest.warns(UserWarning):
        assert nn.CrossEntropyLoss(reduce=False).reduction == "none"


# ---- modules --------------------------------------------------------------------------------
def test_loss_modules_forward_match_functional():
    x, y = randn(4, 3), randn(4, 3)
    t = labels(4, 3)
    w = np.array([1.0, 2.0, 0.5])
    q = RNG.uniform(0, 1, (4, 3))
    pairs = [
        (nn.L1Loss(reduction="sum"), torch.nn.L1Loss(reduction="sum"), (x, y)),
        (nn.MSELoss(), torch.nn.MSELoss(), (x, y)),
        (nn.SmoothL1Loss(beta=0.3), torch.nn.SmoothL1Loss(beta=0.3), (x, y)),
        (nn.HuberLoss(delta=0.4), torch.nn.HuberLoss(delta=0.4), (x, y)),
        (nn.CrossEntropyLoss(weight=_t(w), ignore_index=1, label_smoothing=0.1),
         torch.nn.CrossEntropyLoss(weight=_th(w), ignore_index=1, label_smoothing=0.1), (x, t)),
        (nn.NLLLoss(weight=_t(w)), torch.nn.NLLLoss(weight=_th(w)), (x, t)),
        (nn.BCELoss(weight=_t(w)), torch.nn.BCELoss(weight=_th(w)), (q, q[::-1].copy())),
        (nn.BCEWithLogitsLoss(pos_weight=_t(w)), torch.nn.BCEWithLogitsLoss(pos_weight=_th(w)),
         (x, q)),
        (nn.KLDivLoss(reduction="batchmean"), torch.nn.KLDivLoss(reduction="batchmean"),
         (x, q)),
        (nn.PoissonNLLLoss(), torch.nn.PoissonNLLLoss(), (x, q)),
        (nn.GaussianNLLLoss(), torch.nn.GaussianNLLLoss(), (x, y, q + 0.1)),
        (nn.HingeEmbeddingLoss(), torch.nn.HingeEmbeddingLoss(), (x, sign_target(4, 3))),
        (nn.SoftMarginLoss(), torch.nn.SoftMarginLoss(), (x, sign_target(4, 3))),
        (nn.MultiLabelSoftMarginLoss(weight=_t(w)),
         torch.nn.MultiLabelSoftMarginLoss(weight=_th(w)), (x, (q > 0.5) * 1.0)),
        (nn.MultiMarginLoss(p=2), torch.nn.MultiMarginLoss(p=2), (x, t)),
        (nn.MultiLabelMarginLoss(), torch.nn.MultiLabelMarginLoss(),
         (x, np.array([[0, -1, 1]] * 4))),
        (nn.CosineEmbeddingLoss(0.2), torch.nn.CosineEmbeddingLoss(0.2),
         (x, y, sign_target(4))),
        (nn.MarginRankingLoss(0.3), torch.nn.MarginRankingLoss(0.3), (x, y, sign_target(4, 3))),
        (nn.TripletMarginLoss(p=1), torch.nn.TripletMarginLoss(p=1), (x, y, q)),
        (nn.TripletMarginWithDistanceLoss(), torch.nn.TripletMarginWithDistanceLoss(),
         (x, y, q)),
    ]
    for mine, ref, args in pairs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = mine(*[_t(a) for a in args])
            exp = ref(*[_th(a) for a in args])
        np.testing.assert_allclose(_np(out), _np(exp), rtol=1e-10, err_msg=repr(mine))
        assert repr(mine) == repr(ref)
        assert list(mine.state_dict()) == list(ref.state_dict())


def test_loss_module_state_dict_and_attributes():
    w = np.array([1.0, 2.0])
    m = nn.CrossEntropyLoss(weight=_t(w))
    assert list(m.state_dict()) == ["weight"]
    assert list(nn.CrossEntropyLoss().state_dict()) == []
    b = nn.BCEWithLogitsLoss(pos_weight=_t(w))
    assert list(b.state_dict()) == list(torch.nn.BCEWithLogitsLoss(
        pos_weight=_th(w)).state_dict()) == ["pos_weight"]
    assert m.ignore_index == -100 and m.label_smoothing == 0.0 and m.reduction == "mean"
    with pytest.raises(ValueError):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="greater than 0"):
        nn.TripletMarginLoss(margin=0)


def test_fused_cross_entropy_kernel_hook():
    from tensorlib._C.dispatch import table
    calls = []

    def kernel(out, x, target, ignore_index):
        calls.append(ignore_index)
        logp = F.log_softmax(x, 1)
        keep = target != ignore_index
        picked = logp.gather(1, tensorlib.where(keep, target, 0).unsqueeze(1)).squeeze(1)
        out.copy_(tensorlib.where(keep, -picked, 0.0))

    cpu = table("cpu")
    saved = cpu.get("cross_entropy")
    saved_backward = cpu.pop("cross_entropy_backward", None)    # a forward-only device
    cpu["cross_entropy"] = kernel
    try:
        x, t = randn(5, 4), np.array([0, 3, 1, 1, 2])
        for r in REDUCTIONS:
            out = F.cross_entropy(_t(x), _t(t), ignore_index=1, reduction=r)
            ref = TF.cross_entropy(_th(x), _th(t), ignore_index=1, reduction=r)
            np.testing.assert_allclose(_np(out), _np(ref), rtol=1e-12)
        assert calls == [1, 1, 1]
        compare("cross_entropy", (x, t), {"ignore_index": 1})   # with grad: decomposition
        assert len(calls) == 3
    finally:
        if saved is None:
            cpu.pop("cross_entropy", None)
        else:
            cpu["cross_entropy"] = saved
        if saved_backward is not None:
            cpu["cross_entropy_backward"] = saved_backward


# ---- every backend --------------------------------------------------------------------------
DEVICE_LOSSES = {
    "cross_entropy": lambda x, y, d: F.cross_entropy(
        x, tensorlib.tensor([0, 2, 1, 1], device=d), ignore_index=1, label_smoothing=0.1,
        weight=tensorlib.tensor([1.0, 2.0, 0.5], device=d)),
    "cross_entropy_probs": lambda x, y, d: F.cross_entropy(x, F.softmax(y, 1)),
    "nll_loss": lambda x, y, d: F.nll_loss(x, tensorlib.tensor([0, 2, 1, 1], device=d)),
    "bce": lambda x, y, d: F.binary_cross_entropy(F.sigmoid(x), F.sigmoid(y)),
    "bce_logits": lambda x, y, d: F.binary_cross_entropy_with_logits(
        x, F.sigmoid(y), pos_weight=tensorlib.tensor([1.0, 2.0, 3.0], device=d)),
    "kl_div": lambda x, y, d: F.kl_div(F.log_softmax(x, 1), F.softmax(y, 1),
                                       reduction="batchmean"),
    "huber_smooth_mse_l1": lambda x, y, d: (F.huber_loss(x, y) + F.smooth_l1_loss(x, y, beta=.5)
                                            + F.mse_loss(x, y) + F.l1_loss(x, y)),
    "margins": lambda x, y, d: (
        F.multi_margin_loss(x, tensorlib.tensor([0, 2, 1, 1], device=d))
        + F.multilabel_margin_loss(x, tensorlib.tensor([[0, -1, 0]] * 4, device=d))
        + F.multilabel_soft_margin_loss(x, (y > 0).float())
        + F.soft_margin_loss(x, tensorlib.sign(y)) + F.hinge_embedding_loss(x, tensorlib.sign(y))
        + F.cosine_embedding_loss(x, y, tensorlib.sign(y[:, 0]))
        + F.margin_ranking_loss(x, y, tensorlib.sign(y))
        + F.triplet_margin_loss(x, y, y * 2, swap=True)),
    "poisson_gaussian": lambda x, y, d: (F.poisson_nll_loss(x, y.abs(), full=True)
                                         + F.gaussian_nll_loss(x, y, y.abs())),
    "ctc": lambda x, y, d: F.ctc_loss(F.log_softmax(x.reshape(4, 1, 3), 2),
                                      tensorlib.tensor([[1, 2]], device=d), [4], [2]),
}


@pytest.mark.parametrize("name", sorted(DEVICE_LOSSES))
def test_losses_on_device_match_cpu(device, name):
    x, y = randn(4, 3), randn(4, 3)
    results = []
    for d in ("cpu", device):
        tx = tensorlib.tensor(x.astype(np.float32), device=d, requires_grad=True)
        ty = tensorlib.tensor(y.astype(np.float32), device=d, requires_grad=True)
        out = DEVICE_LOSSES[name](tx, ty, d)
        out.backward()
        results.append((out.item(), tx.grad.cpu().numpy(),
                        None if ty.grad is None else ty.grad.cpu().numpy()))
    assert results[1][0] == pytest.approx(results[0][0], rel=1e-5, abs=1e-6)
    for a, b in zip(results[0][1:], results[1][1:]):
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_grad_fn_is_named_as_torch_names_it(reduction):
    # one fused node here; PyTorch's graph ends in nll_loss's, which print(loss.grad_fn) shows
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    target = [0, 3, 1]
    ours, theirs = (m.nn.functional.cross_entropy(m.tensor(x, requires_grad=True),
                                                  m.tensor(target), reduction=reduction)
                    for m in (tensorlib, torch))
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "NllLossBackward0"
