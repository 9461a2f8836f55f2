"""tensorlib.optim.LBFGS against torch.optim.LBFGS (float64): the iterates, losses and
evaluation counts of several `step` calls on a quadratic and on the Rosenbrock function,
with and without the strong-Wolfe line search and with a history that wraps, and each
stopping rule; the line search alone, bit for bit; a linear model fit; the state_dict round
trip; the errors; and a run on each device."""
import io

import numpy as np
import pytest

import tensorlib
import tensorlib.optim as optim

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(0)
_M = _rng.standard_normal((6, 6))
A = _M @ _M.T + 0.5 * np.eye(6)          # symmetric positive definite
B = _rng.standard_normal(6)
X0 = np.linspace(-1.2, 1.0, 6)


def quadratic(lib, x):
    return 0.5 * (x * (lib.tensor(A) @ x)).sum() - (lib.tensor(B) * x).sum()


def rosenbrock(lib, x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def _minimize(lib, objective, steps=4, extra_param=False, **kw):
    """`steps` LBFGS steps on objective(x) from X0: the loss each step returned, x after
    each step, and the optimizer. With `extra_param`, a second parameter the loss ignores
    (its grad stays None)."""
    x = lib.tensor(X0, requires_grad=True)
    params = [x, lib.zeros(2, dtype=x.dtype, requires_grad=True)] if extra_param else [x]
    opt = lib.optim.LBFGS(params, **kw)

    def closure():
        opt.zero_grad()
        loss = objective(lib, x)
        loss.backward()
        return loss

    losses, xs = [], []
    for _ in range(steps):
        losses.append(opt.step(closure).item())
        xs.append(x.detach().numpy().copy())
    return np.array(losses), np.array(xs), opt


def cone(lib, x):
    """Not smooth at its minimum: the line search ends on a tiny bracket there."""
    return ((x - 0.3) ** 2).sum().sqrt()


def _assert_matches_torch(objective, **kw):
    """tensorlib's and torch's runs agree; returns tensorlib's and torch's global state."""
    losses, xs, opt = _minimize(tensorlib, objective, **kw)
    t_losses, t_xs, t_opt = _minimize(torch, objective, **kw)
    assert np.isfinite(xs).all()
    np.testing.assert_allclose(losses, t_losses, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(xs, t_xs, rtol=1e-6, atol=1e-9)
    state = opt.state[opt.param_groups[0]["params"][0]]
    t_state = t_opt.state[t_opt.param_groups[0]["params"][0]]
    assert state.keys() == t_state.keys()
    for key in ("func_evals", "n_iter"):
        assert state[key] == t_state[key]
    return state, t_state


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"], ids=["fixed", "wolfe"])
@pytest.mark.parametrize("objective,kw", [
    (quadratic, dict(lr=0.5)),
    (rosenbrock, dict(lr=0.2)),
    (rosenbrock, dict(max_iter=8, max_eval=12)),
], ids=["quadratic", "rosenbrock", "rosenbrock-lr1"])
def test_matches_torch(objective, kw, line_search_fn):
    state, t_state = _assert_matches_torch(objective, history_size=3,
                                           line_search_fn=line_search_fn, **kw)
    assert len(state["old_dirs"]) == len(t_state["old_dirs"]) == 3   # the history wrapped
    assert state["n_iter"] > 3


@pytest.mark.parametrize("objective,kw", [
    (quadratic, dict(lr=2)),                 # converges: stops on no change in the loss
    (cone, dict(line_search_fn="strong_wolfe")),    # stops on a vanishing step
    (quadratic, dict(lr=1e-3, max_eval=2, line_search_fn="strong_wolfe")),  # 1 line eval
], ids=["loss-change", "cone-tiny-step", "max-eval"])
def test_stopping_rules_match_torch(objective, kw):
    _assert_matches_torch(objective, history_size=3, **kw)


def test_line_search_is_torchs_on_the_same_arithmetic():
    """The line search alone, run on torch tensors against torch's own `_strong_wolfe`:
    bit-identical results over random lines through smooth and non-smooth functions,
    covering every branch (extrapolation, zoom, the insufficient-progress rule, a
    vanishing bracket, running out of evaluations). The end-to-end tests above compare
    within a tolerance only because the two libraries round some ops differently (torch's
    float64 sqrt here is not always correctly rounded; sums may add in another order)."""
    from torch.optim.lbfgs import _strong_wolfe as torch_strong_wolfe

    from tensorlib.optim.lbfgs import _strong_wolfe

    def rosenbrock_np(x):
        r = x[1:] - x[:-1] ** 2
        g = np.zeros_like(x)
        g[:-1] = -400 * x[:-1] * r - 2 * (1 - x[:-1])
        g[1:] += 200 * r
        return np.sum(100 * r ** 2 + (1 - x[:-1]) ** 2), g

    functions = [
        rosenbrock_np,
        lambda x: (np.abs(x - 0.3).sum() + 0.01 * (x * x).sum(), np.sign(x - 0.3) + 0.02 * x),
        lambda x: (((x - 0.3) ** 4).sum() + np.exp(x).sum(), 4 * (x - 0.3) ** 3 + np.exp(x)),
        lambda x: (np.abs(x - 0.3).sum(), np.sign(x - 0.3)),
    ]
    rng = np.random.default_rng(0)
    for trial in range(400):
        fn = functions[trial % 4]
        x0 = rng.standard_normal(1 if trial % 4 == 3 else 3) * 1.5
        f0, g0 = fn(x0)
        d0 = (-g0 * rng.uniform(0.2, 2) + 0.3 * rng.standard_normal(x0.shape)) \
            * 10 ** rng.uniform(-9, 0)
        t0 = 10 ** rng.uniform(-4, 3)
        max_ls = int(rng.integers(1, 26))

        def obj_func(x, t, d):
            f, g = fn(x[0].numpy() + float(t) * d.numpy())
            return float(f), torch.tensor(g)

        results = []
        for line_search in (_strong_wolfe, torch_strong_wolfe):
            g, d = torch.tensor(g0), torch.tensor(d0)
            f_new, g_new, t, evals = line_search(obj_func, [torch.tensor(x0)], t0, d, float(f0),
                                                 g, g.dot(d), max_ls=max_ls)
            results.append((f_new, float(t), evals, g_new.numpy()))
        (f_a, t_a, n_a, g_a), (f_b, t_b, n_b, g_b) = results
        assert (f_a, t_a, n_a) == (f_b, t_b, n_b) or np.isnan([f_a, f_b]).all()
        np.testing.assert_array_equal(g_a, g_b)


def test_defaults_and_grad_none_param_match_torch():
    """Default options (lr=1, max_iter=20, max_eval=25); a parameter without a gradient
    takes part as zeros and never moves."""
    losses, xs, opt = _minimize(tensorlib, quadratic, steps=2, extra_param=True)
    t_losses, t_xs, t_opt = _minimize(torch, quadratic, steps=2, extra_param=True)
    group = opt.param_groups[0]
    for key in ("lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change",
                "history_size", "line_search_fn"):
        assert group[key] == t_opt.param_groups[0][key]
    np.testing.assert_allclose(losses, t_losses, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(xs, t_xs, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(group["params"][1].detach().numpy(), np.zeros(2))


def test_float32_keeps_torchs_state_dtypes():
    """In float32 the scalars of the update are float32 0-d tensors, as in PyTorch."""
    def run(lib):
        x = lib.tensor(X0, dtype=lib.float32, requires_grad=True)
        opt = lib.optim.LBFGS([x], max_iter=4, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = quadratic(lib, x.double()).float()
            loss.backward()
            return loss

        opt.step(closure)
        return x.detach().numpy(), opt.state[x]

    x, state = run(tensorlib)
    t_x, t_state = run(torch)
    np.testing.assert_allclose(x, t_x, rtol=1e-5, atol=1e-6)
    assert type(state["t"]) is type(t_state["t"]) is int    # lr, after the first iteration
    for key in ("H_diag", "d", "prev_flat_grad"):
        assert state[key].dtype == tensorlib.float32
    assert [r.dtype for r in state["ro"]] == [tensorlib.float32] * len(t_state["ro"])


@pytest.mark.parametrize("task", ["least_squares", "logistic"])
def test_linear_model_fit_matches_torch(task):
    rng = np.random.default_rng(1)
    inputs = rng.standard_normal((64, 5))
    true_w = rng.standard_normal((5, 1))
    if task == "least_squares":
        targets = inputs @ true_w + 0.1 * rng.standard_normal((64, 1))
    else:
        targets = (inputs @ true_w + 0.5 * rng.standard_normal((64, 1)) > 0).astype(float)
    weight, bias = 0.1 * rng.standard_normal((1, 5)), np.zeros(1)

    def fit(lib):
        model = lib.nn.Linear(5, 1).double()
        with lib.no_grad():
            model.weight.copy_(lib.tensor(weight))
            model.bias.copy_(lib.tensor(bias))
        loss_fn = lib.nn.MSELoss() if task == "least_squares" else lib.nn.BCEWithLogitsLoss()
        xb, yb = lib.tensor(inputs), lib.tensor(targets)
        opt = lib.optim.LBFGS(model.parameters(), history_size=10,
                              line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            return loss

        for _ in range(3):
            opt.step(closure)
        return closure().item(), model.weight.detach().numpy()

    loss, w = fit(tensorlib)
    t_loss, t_w = fit(torch)
    assert abs(loss - t_loss) <= 1e-6 * max(1.0, abs(t_loss))
    np.testing.assert_allclose(w, t_w, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"], ids=["fixed", "wolfe"])
def test_state_dict_round_trip_continues_identically(line_search_fn):
    kw = dict(history_size=3, max_iter=5, line_search_fn=line_search_fn, lr=0.5)
    _, xs, full = _minimize(tensorlib, rosenbrock, steps=5, **kw)

    _, first, opt = _minimize(tensorlib, rosenbrock, steps=2, **kw)
    buffer = io.BytesIO()
    tensorlib.save(opt.state_dict(), buffer)
    buffer.seek(0)
    x = tensorlib.tensor(first[-1], requires_grad=True)
    resumed = optim.LBFGS([x], **kw)
    resumed.load_state_dict(tensorlib.load(buffer))
    state = resumed.state[x]
    assert isinstance(state["old_dirs"], list) and len(state["ro"]) == len(state["old_stps"])

    def closure():
        resumed.zero_grad()
        loss = rosenbrock(tensorlib, x)
        loss.backward()
        return loss

    for expected in xs[2:]:
        resumed.step(closure)
        np.testing.assert_array_equal(x.detach().numpy(), expected)
    full_state = full.state[full.param_groups[0]["params"][0]]
    for key in ("func_evals", "n_iter"):
        assert resumed.state[x][key] == full_state[key]


def test_errors():
    x = tensorlib.zeros(3, requires_grad=True)
    opt = optim.LBFGS([x])
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'closure'"):
        opt.step()
    y = tensorlib.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [x]}, {"params": [y], "lr": 0.1}])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.LBFGS([x], lr=-1)

    def closure():
        opt.zero_grad()
        loss = ((x - 1) ** 2).sum()
        loss.backward()
        return loss

    opt = optim.LBFGS([x], line_search_fn="backtracking")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


def test_converged_step_returns_without_iterating():
    x = tensorlib.ones(3, dtype=tensorlib.float64, requires_grad=True)
    opt = optim.LBFGS([x])

    def closure():
        opt.zero_grad()
        loss = ((x - 1) ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0.0
    assert opt.state[x] == {"func_evals": 1, "n_iter": 0}


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"], ids=["fixed", "wolfe"])
def test_on_device(device, line_search_fn):
    kw = dict(history_size=3, max_iter=6, line_search_fn=line_search_fn, lr=0.5)
    _, expected, _ = _minimize(tensorlib, quadratic, steps=2, **kw)
    x = tensorlib.tensor(X0, requires_grad=True, device=device)
    a, b = tensorlib.tensor(A, device=device), tensorlib.tensor(B, device=device)
    opt = optim.LBFGS([x], **kw)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (x * (a @ x)).sum() - (b * x).sum()
        loss.backward()
        return loss

    for want in expected:
        opt.step(closure)
        np.testing.assert_allclose(x.cpu().detach().numpy(), want, rtol=1e-6, atol=1e-9)
    assert opt.state[x]["d"].device == x.device
