"""Rewrites of replayed programs (tensorlib/compiler/rewrite.py) and the kernels a replay
keeps (a Linear's addmm_bias): the replayed results and gradients stay eager's, and a
running sum that something still reads is never accumulated onto."""
import numpy as np

import tensorlib as tl
import tensorlib.nn as nn
from tensorlib._C.device import canonical
from tensorlib.compiler import replay as R
from tensorlib.compiler import rewrite


def _np(t):
    return t.detach().cpu().numpy()


def _program(compiled):
    programs = [e for e in compiled._replayer.entries.values() if isinstance(e, R.Program)]
    assert len(programs) == 1
    return programs[0]


def _kernel_names(kernels, table):
    names = {id(k): n for n, k in table.items()}
    return [names.get(id(st.fn)) for st in kernels.steps]


def test_a_weight_used_at_every_step_gets_eager_gradients_and_one_kernel_per_use(device):
    tl.manual_seed(0)
    w = tl.randn(6, 6, dtype=tl.float64, device=device, requires_grad=True)

    def unrolled(x):
        h = x
        for _ in range(5):
            h = (h @ w).tanh()
        return h.sum()
    g = tl.compile(unrolled)
    for _ in range(4):
        x = tl.randn(3, 6, dtype=tl.float64, device=device)
        w.grad = None
        g(x).backward()
        got = w.grad
        w.grad = None
        unrolled(x).backward()
        np.testing.assert_allclose(_np(got), _np(w.grad), rtol=1e-12, atol=1e-12)
    assert g.replayed_calls >= 1
    table = canonical(device)._kernels
    if all(table.get(k) is not None for k in ("mm", "add", "addmm")):
        names = _kernel_names(_program(g).backward, table)
        # five products onto one running sum: the first makes it, four accumulate
        assert names.count("addmm") == 4
        assert names.count("add") == 0


def test_lstm_cells_stepped_in_a_compiled_loop_match_eager(device):
    tl.manual_seed(1)
    cells = [nn.LSTMCell(1, 7).double().to(device), nn.LSTMCell(7, 7).double().to(device)]
    head = nn.Linear(7, 1).double().to(device)
    params = [p for m in (*cells, head) for p in m.parameters()]

    def sequence(x):
        state = [(tl.zeros(4, 7, dtype=tl.float64, device=device),) * 2 for _ in cells]
        outs = []
        for i in range(6):
            inp = x[:, i:i + 1]
            for c, cell in enumerate(cells):
                state[c] = cell(inp, state[c])
                inp = state[c][0]
            outs.append(head(inp))
        return tl.cat(outs, dim=1)
    g = tl.compile(sequence)
    x = tl.randn(4, 6, dtype=tl.float64, device=device)
    for _ in range(4):
        for p in params:
            p.grad = None
        y = g(x)
        y.square().sum().backward()
        got = [y.detach().clone()] + [p.grad.clone() for p in params]
        for p in params:
            p.grad = None
        y = sequence(x)
        y.square().sum().backward()
        for a, b in zip(got, [y] + [p.grad for p in params]):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)
    assert g.replayed_calls >= 1
    table = canonical(device)._kernels
    if table.get("addmm_bias") is not None:
        names = _kernel_names(_program(g).forward, table)
        assert names.count("addmm_bias") == 6 * 5       # each Linear's product and bias


def _binder(new_buffers):
    """Slots of a synthetic program: two 4x4 float64 inputs, then `new_buffers` buffers made
    during the call, one whole view each."""
    cpu = canonical("cpu")
    dt = tl.float64

    class Binder:
        kinds = [("in", 0), ("in", 1)] + [("new", 4 * 4 * dt.itemsize, cpu)] * new_buffers
        views = [(s, (4, 4), (4, 1), 0, dt) for s in range(2 + new_buffers)]
    return Binder(), (R._View(i) for i in range(2 + new_buffers))


def _synthetic(reads_sum_later):
    """A program: A = x @ y; T = x @ y; N = A + T; then (optionally) C = A + N."""
    k = canonical("cpu")._kernels
    binder, (x, y, a, t, n, c) = _binder(4)
    steps = [R._Step(k["mm"], (a, x, y), {}), R._Step(k["mm"], (t, x, y), {}),
             R._Step(k["add"], (n, a, t), {})]
    if reads_sum_later:
        steps.append(R._Step(k["add"], (c, a, n), {}))
    return steps, binder


def test_a_running_sum_read_after_the_add_is_not_accumulated_onto():
    steps, binder = _synthetic(reads_sum_later=True)
    out = rewrite.accumulate_products(steps, binder, set(), R._Step, R._View)
    assert [st.fn for st in out] == [st.fn for st in steps]
    assert [v[0] for v in binder.views] == list(range(6))


def test_a_dead_running_sum_takes_the_product_and_its_readers_follow_it():
    steps, binder = _synthetic(reads_sum_later=False)
    k = canonical("cpu")._kernels
    out = rewrite.accumulate_products(steps, binder, {4}, R._Step, R._View)
    assert [st.fn for st in out] == [k["mm"], k["addmm"]]
    assert binder.views[4][0] == 2          # N is read from A's buffer
    xs = [tl.randn(4, 4, dtype=tl.float64) for _ in range(2)]
    views = [xs[0], xs[1], tl.empty(4, 4, dtype=tl.float64)]
    views = views + [views[2]] * 3          # T, N and the unused C all name A's buffer now
    for st in out:
        st.fn(*[views[a.i] if isinstance(a, R._View) else a for a in st.args])
    want = 2 * (_np(xs[0]) @ _np(xs[1]))
    np.testing.assert_allclose(_np(views[4]), want, rtol=1e-12)


def test_a_product_of_an_mm_pair_is_accumulated_and_the_pair_split():
    """A Linear's backward makes its two products in one mm_pair step; when the running sum
    a product is added onto is dead, that product becomes an addmm onto it and the other an
    mm of its own."""
    k = canonical("cpu")._kernels
    binder, (x, y, a, p, t, n) = _binder(4)
    # A = x @ y; (P = x @ y, T = y @ x) as a pair; N = A + T
    steps = [R._Step(k["mm"], (a, x, y), {}), R._Step(k["mm_pair"], (p, x, y, t, y, x), {}),
             R._Step(k["add"], (n, a, t), {})]
    out = rewrite.accumulate_products(steps, binder, {3, 5}, R._Step, R._View)
    assert [st.fn for st in out] == [k["mm"], k["mm"], k["addmm"]]
    xs = [tl.randn(4, 4, dtype=tl.float64) for _ in range(2)]
    acc, other = tl.empty(4, 4, dtype=tl.float64), tl.empty(4, 4, dtype=tl.float64)
    views = [xs[0], xs[1], acc, other, acc, acc]       # T and N name A's buffer now
    for st in out:
        st.fn(*[views[a_.i] if isinstance(a_, R._View) else a_ for a_ in st.args])
    x0, y0 = _np(xs[0]), _np(xs[1])
    np.testing.assert_allclose(_np(other), x0 @ y0, rtol=1e-12)
    np.testing.assert_allclose(_np(acc), x0 @ y0 + y0 @ x0, rtol=1e-12)


def test_a_pair_whose_products_are_not_summed_stays_one_step():
    k = canonical("cpu")._kernels
    binder, (x, y, p, t) = _binder(2)
    steps = [R._Step(k["mm_pair"], (p, x, y, t, y, x), {})]
    out = rewrite.accumulate_products(steps, binder, {2, 3}, R._Step, R._View)
    assert [st.fn for st in out] == [k["mm_pair"]]
