"""rnn_kernels (the fused LSTM cell, forward and backward) against numpy float64 and PyTorch,
on the layouts it takes (row-strided inputs) and refusing (False) the others; the fused op's
gradients by gradcheck, its double backward by gradgradcheck, and its fallbacks (a gradient
of the activated gates, forward AD, a declined layout)."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.nn._functional import lstm_cell as lc
from tensorlib_cpu import rnn_kernels as rk

EDGES = [0.0, 30.0, -30.0, 800.0, -800.0, np.inf, -np.inf, np.nan]


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


def _reference(ig, hg, c):
    """(h', c', act) in numpy float64."""
    gates = ig.astype(np.float64) + hg
    i, f, g, o = np.split(gates, 4, axis=1)
    act = np.concatenate([_sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)], axis=1)
    i, f, g, o = np.split(act, 4, axis=1)
    c_new = f * c + i * g
    return o * np.tanh(c_new), c_new, np.concatenate([act, np.tanh(c_new)], axis=1)


def _reference_backward(gh, gc, c, act):
    i, f, g, o, t = np.split(act, 5, axis=1)
    dc = gh * o * (1 - t * t) + gc
    grad_gates = np.concatenate([dc * g * i * (1 - i), dc * c * f * (1 - f),
                                 dc * i * (1 - g * g), gh * t * o * (1 - o)], axis=1)
    return grad_gates, dc * f


def _inputs(dtype, rows=7, hidden=5, edges=False):
    rng = np.random.default_rng(0)
    ig = rng.standard_normal((rows, 4 * hidden)) * 3
    hg = rng.standard_normal((rows, 4 * hidden))
    c = rng.standard_normal((rows, hidden))
    if edges:
        ig[0, :len(EDGES)] = EDGES                      # every gate of row 0 sees one
        ig[1, hidden:hidden + len(EDGES)] = EDGES
        ig[2, 2 * hidden:2 * hidden + len(EDGES)] = EDGES
    return ig.astype(dtype), hg.astype(dtype), c.astype(dtype)


def _empty(shape, like):
    return tl.empty(shape, dtype=like.dtype)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 3e-6), (np.float64, 1e-14)])
def test_forward_matches_numpy(dtype, tol):
    ig, hg, c = _inputs(dtype, hidden=9, edges=True)
    # the input gates as a row-strided view (a column block of a wider matrix)
    wide = tl.from_numpy(np.concatenate([ig, ig], axis=1)).narrow(1, ig.shape[1], ig.shape[1])
    t_c = tl.from_numpy(c)
    h_out, c_out = _empty(c.shape, t_c), _empty(c.shape, t_c)
    act = _empty((c.shape[0], 5 * c.shape[1]), t_c)
    assert rk.lstm_cell(h_out, c_out, act, wide, tl.from_numpy(hg), t_c)
    for got, want in zip((h_out, c_out, act), _reference(ig, hg, c)):
        np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 3e-6), (np.float64, 1e-14)])
@pytest.mark.parametrize("given", ["both", "h only", "c only", "no grad_c"])
def test_backward_matches_numpy(dtype, tol, given):
    ig, hg, c = _inputs(dtype)
    act = _reference(ig, hg, c)[2].astype(dtype)
    rng = np.random.default_rng(1)
    gh = rng.standard_normal(c.shape).astype(dtype)
    gc = rng.standard_normal(c.shape).astype(dtype)
    t = tl.from_numpy
    grad_gates, grad_c = _empty(ig.shape, t(c)), _empty(c.shape, t(c))
    assert rk.lstm_cell_backward(grad_gates, None if given == "no grad_c" else grad_c,
                                 None if given == "c only" else t(gh),
                                 None if given == "h only" else t(gc), t(c), t(act))
    want_gates, want_c = _reference_backward(0 * gh if given == "c only" else gh,
                                             0 * gc if given == "h only" else gc,
                                             c, act)
    np.testing.assert_allclose(grad_gates.numpy(), want_gates, rtol=tol, atol=tol)
    if given != "no grad_c":
        np.testing.assert_allclose(grad_c.numpy(), want_c, rtol=tol, atol=tol)


def test_kernels_refuse_what_they_do_not_take():
    ig, hg, c = (tl.from_numpy(x) for x in _inputs(np.float64))
    h_out, c_out = _empty(c.shape, c), _empty(c.shape, c)
    act = _empty((c.shape[0], 5 * c.shape[1]), c)
    strided_cols = tl.from_numpy(np.zeros((7, 40)))[:, ::2]
    assert not rk.lstm_cell(h_out, c_out, act, strided_cols, hg, c)          # column stride
    assert not rk.lstm_cell(h_out, c_out, act, ig.float(), hg, c)            # mixed dtypes
    assert not rk.lstm_cell(h_out, c_out, act, ig[:, :12], hg, c)            # wrong width
    assert not rk.lstm_cell(h_out.t().contiguous().t(), c_out, act, ig, hg, c)
    assert not rk.lstm_cell(h_out.long(), c_out.long(), act.long(), ig.long(), hg.long(),
                            c.long())
    assert not rk.lstm_cell(h_out, c_out, ig, ig, hg, c)                   # act too narrow
    assert not rk.lstm_cell_backward(ig, None, c.t(), None, c, act)        # strided grad


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lstm_cell_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x, h, c = (rng.standard_normal(s) for s in ((6, 3), (6, 4), (6, 4)))
    t_cell = torch.nn.LSTMCell(3, 4).to(getattr(torch, dtype))
    cell = tl.nn.LSTMCell(3, 4).to(getattr(tl, dtype))
    cell.load_state_dict({k: tl.from_numpy(v.detach().numpy().copy())
                          for k, v in t_cell.state_dict().items()})
    t_in = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in (x, h, c)]
    ins = [tl.tensor(a, dtype=getattr(tl, dtype), requires_grad=True) for a in (x, h, c)]
    t_h, t_c = t_cell(t_in[0], (t_in[1], t_in[2]))
    h2, c2 = cell(ins[0], (ins[1], ins[2]))
    assert type(h2.grad_fn).__name__ == "LstmCellFusedBackward0"
    (t_h.sum() + (t_c * t_c).sum()).backward()
    (h2.sum() + (c2 * c2).sum()).backward()
    tol = 1e-12 if dtype == "float64" else 2e-6
    pairs = [(h2.detach(), t_h.detach()), (c2.detach(), t_c.detach())] + \
        [(a.grad, b.grad) for a, b in zip(ins, t_in)]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)
    for (name, p), t_p in zip(cell.named_parameters(), t_cell.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), t_p.grad.numpy(), rtol=tol, atol=tol,
                                   err_msg=name)


def _leaves(rows=3, hidden=2):
    return [tl.tensor(x, requires_grad=True) for x in _inputs(np.float64, rows, hidden)]


def test_fused_op_gradcheck_and_gradgradcheck():
    leaves = _leaves()
    assert type(lc.lstm_pointwise(*leaves)[0].grad_fn).__name__ == "LstmCellFusedBackward0"
    for pick in (lambda out: out, lambda out: out[0], lambda out: out[1]):
        assert tl.autograd.gradcheck(lambda *a: pick(lc.lstm_pointwise(*a)), leaves)
    assert tl.autograd.gradgradcheck(lambda *a: lc.lstm_pointwise(*a), leaves)


def test_gradient_of_the_activated_gates_takes_the_ops_path():
    # the op's third output is internal, but its node gives it a right gradient
    leaves = _leaves()
    assert tl.autograd.gradcheck(lambda *a: lc._fused_op(*a), leaves)


def test_forward_ad_runs_the_composite():
    leaves = [t.detach() for t in _leaves()]
    tangents = [tl.ones_like(t) for t in leaves]
    import tensorlib.autograd.forward_ad as fwad
    with fwad.dual_level():
        h, c = lc.lstm_pointwise(*[fwad.make_dual(p, t) for p, t in zip(leaves, tangents)])
        jvp_h = fwad.unpack_dual(h).tangent
    eps = 1e-6
    plus = lc.lstm_pointwise(*[p + eps * t for p, t in zip(leaves, tangents)])[0]
    minus = lc.lstm_pointwise(*[p - eps * t for p, t in zip(leaves, tangents)])[0]
    np.testing.assert_allclose(jvp_h.numpy(), ((plus - minus) / (2 * eps)).numpy(),
                               rtol=1e-6, atol=1e-8)


def test_declined_layout_falls_back_to_the_composite():
    ig, hg, c = _leaves()
    c_cols = tl.tensor(np.repeat(c.detach().numpy(), 2, axis=1),
                       requires_grad=True)[:, ::2]        # a column stride: declined
    h, c_new = lc.lstm_pointwise(ig, hg, c_cols)
    assert type(h.grad_fn).__name__ == "MulBackward0"
    want_h, want_c, _ = _reference(ig.detach().numpy(), hg.detach().numpy(),
                                   c.detach().numpy())
    np.testing.assert_allclose(h.detach().numpy(), want_h, rtol=1e-14)
    np.testing.assert_allclose(c_new.detach().numpy(), want_c, rtol=1e-14)


def test_threaded_cells_equal_one_thread():
    """The LSTM sequence row's cell (97x51 float64) splits its rows over the threads
    (rnn_kernels.PAR_MIN); each row is computed alone, so the result is one thread's."""
    assert 97 * 51 >= rk.PAR_MIN
    ig, hg, c = (tl.from_numpy(x) for x in _inputs(np.float64, rows=97, hidden=51, edges=True))
    gh, gc = (tl.from_numpy(np.random.default_rng(k).standard_normal((97, 51))) for k in (1, 2))
    before = tl.get_num_threads()
    results = []
    try:
        for nt in (1, 2):
            tl.set_num_threads(nt)
            h_out, c_out, act = _empty(c.shape, c), _empty(c.shape, c), _empty((97, 255), c)
            assert rk.lstm_cell(h_out, c_out, act, ig, hg, c)
            gg, gcp = _empty((97, 204), c), _empty(c.shape, c)
            assert rk.lstm_cell_backward(gg, gcp, gh, gc, c, act)
            results.append([t.numpy().copy() for t in (h_out, c_out, act, gg, gcp)])
    finally:
        tl.set_num_threads(before)
    for one, two in zip(*results):
        np.testing.assert_array_equal(one, two)
