"""Adafactor and SparseAdam: parameter trajectories against torch.optim over several steps
(float64, every test device), their hyperparameter and gradient-kind errors."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

R = np.random.default_rng(3)
SHAPES = [(4, 3), (3,), (2, 4, 3), (1, 5)]
INITIAL = [R.normal(size=s) for s in SHAPES]
TABLE = R.normal(size=(6, 3))


def _adafactor_run(lib, device, steps=6, **options):
    kw = {"device": device} if lib is tl else {}
    params = [lib.tensor(v, dtype=lib.float64, requires_grad=True, **kw) for v in INITIAL]
    opt = lib.optim.Adafactor(params, **options)
    for _ in range(steps):
        opt.zero_grad()
        loss = (params[0] ** 3).sum() + params[1].sin().sum() * params[0].sum() \
            + (params[2] ** 2).sum() + (params[3] * params[3].cos()).sum()
        loss.backward()
        opt.step()
    return [p.detach().cpu().numpy() for p in params], opt


@pytest.mark.parametrize("options", [{}, {"lr": 0.1, "weight_decay": 0.1},
                                     {"maximize": True, "eps": (1e-5, 1e-2), "d": 2.0,
                                      "beta2_decay": -0.5}])
def test_adafactor_matches_torch(device, options):
    ours, opt = _adafactor_run(tl, device, **options)
    theirs, _ = _adafactor_run(torch, "cpu", **options)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    state = opt.state[opt.param_groups[0]["params"][2]]
    assert tuple(state["row_var"].shape) == (2, 4, 1)
    assert tuple(state["col_var"].shape) == (2, 1, 3)
    assert float(state["step"]) == 6.0


def test_adafactor_errors():
    p = [tl.zeros(2, requires_grad=True)]
    for options in ({"lr": -1.0}, {"beta2_decay": 0.5}, {"eps": (-1.0, 1e-3)},
                    {"eps": (None, -1.0)}, {"d": 0.5}, {"weight_decay": -1.0}):
        with pytest.raises(ValueError):
            tl.optim.Adafactor(p, **options)
    with pytest.raises(ValueError, match="1-element"):
        tl.optim.Adafactor(p, lr=tl.tensor([0.1, 0.2]))
    sparse = tl.zeros(3, 2, requires_grad=True)
    sparse.grad = tl.sparse_coo_tensor(tl.tensor([[0]]), tl.ones(1, 2), (3, 2))
    with pytest.raises(RuntimeError, match="sparse gradients"):
        tl.optim.Adafactor([sparse]).step()


def _sparse_adam_run(lib, device, maximize):
    kw = {"device": device} if lib is tl else {}
    param = lib.tensor(TABLE, dtype=lib.float64,
                       requires_grad=True, **kw)
    opt = lib.optim.SparseAdam([param], lr=0.1, maximize=maximize)
    for step in range(5):
        # a repeated row: coalescing sums it before the (non-linear) update
        rows = [[step % 6, (step + 2) % 6, step % 6]]
        values = np.arange(9.0).reshape(3, 3) * (step + 1) - 4
        param.grad = lib.sparse_coo_tensor(lib.tensor(rows, **kw),
                                           lib.tensor(values, dtype=lib.float64, **kw), (6, 3))
        opt.step()
    return param.detach().cpu().numpy()


@pytest.mark.parametrize("maximize", [False, True])
def test_sparse_adam_matches_torch(device, maximize):
    np.testing.assert_allclose(_sparse_adam_run(tl, device, maximize),
                               _sparse_adam_run(torch, "cpu", maximize), rtol=1e-12)


def test_sparse_adam_errors():
    p = tl.zeros(3, requires_grad=True)
    p.grad = tl.ones(3)
    with pytest.raises(RuntimeError, match="does not support dense gradients"):
        tl.optim.SparseAdam([p]).step()
    for options in ({"lr": 0.0}, {"eps": 0.0}, {"betas": (1.0, 0.9)}, {"betas": (0.9, -0.1)}):
        with pytest.raises(ValueError):
            tl.optim.SparseAdam([p], **options)
    with pytest.raises(ValueError, match="complex parameters"):
        tl.optim.SparseAdam([tl.zeros(2, dtype=tl.complex64, requires_grad=True)])
