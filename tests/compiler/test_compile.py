"""tensorlib.compile gives eager's values, gradients and training over the model zoo, on
every device; graph breaks, fullgraph, guards, caches, custom backends."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib._C.dispatch import has_kernel
from tensorlib.compiler import plan as _plan

from tests.compiler.models import ZOO, make


def _np(t):
    return t.detach().cpu().numpy()


def _close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def chain(x):
    return (x * 2 + 1).relu().exp()


def test_chain_matches_eager(device):
    x = tl.randn(1000, 37, device=device)
    f = tl.compile(chain)
    for _ in range(3):
        _close(f(x), chain(x))


def test_chain_fuses_into_one_generated_kernel(device):
    tl.compiler.reset()
    x = tl.randn(4096, device=device)
    f = tl.compile(chain)
    f(x)
    f(x)
    specs = [s for p in _plan._PLANS.values() for s in p.fused_specs]
    assert any([st.op for st in s.steps] == ["mul", "add", "maximum", "exp"] for s in specs)
    # only the result is stored: the three intermediates live in registers
    assert any(len(s.stores) == 1 and len(s.steps) == 4 for s in specs)


def test_intermediates_that_are_returned_are_written(device):
    def f(x):
        y = x * 3
        return y.sin() + 1, y
    x = tl.randn(300, device=device)
    got, mid = tl.compile(f)(x)
    want, want_mid = f(x)
    _close(got, want)
    _close(mid, want_mid)


def test_broadcast_and_dtype_mixing(device):
    def f(a, b, c):
        return ((a + b) * c > 0.5).to(tl.float32) + (a - b).abs()
    a = tl.randn(33, 17, device=device)
    b = tl.randn(17, device=device)
    c = tl.randn(33, 1, device=device).to(tl.float64)
    _close(tl.compile(f)(a, b, c), f(a, b, c))
    ints = tl.arange(12, device=device).reshape(3, 4)
    g = tl.compile(lambda i: (i * 3 + 1) % 5 - (i // 2))
    _close(g(ints), (ints * 3 + 1) % 5 - (ints // 2))


def test_broadcast_scalars_with_a_stored_mask(device):
    """A ReLU backward's shape: 0-dim operands read once before the loop (CPU), a bool
    mask stored beside the float result, on one thread and on several."""
    def f(x, g, t):
        mask = x > t
        return tl.where(mask, g, t * 2), mask
    t = tl.tensor(0.25, device=device)
    for n in (100, 40000):
        x, g = tl.randn(n, device=device), tl.randn(n, device=device)
        got, got_mask = tl.compile(f)(x, g, t)
        want, want_mask = f(x, g, t)
        _close(got, want, rtol=0, atol=0)
        np.testing.assert_array_equal(_np(got_mask), _np(want_mask))


def test_inplace_updates_of_inputs(device):
    def f(x, y):
        x.mul_(2).add_(y)
        return x * 1
    x1 = tl.randn(50, device=device)
    x2 = x1.clone()
    y = tl.randn(50, device=device)
    out = tl.compile(f)(x1, y)
    ref = f(x2, y)
    _close(x1, x2)
    _close(out, ref)


def test_transposed_and_sliced_views(device):
    def f(x):
        return (x.t() * 2).exp()[::2] + x.t()[::2]
    x = tl.randn(20, 30, device=device)
    _close(tl.compile(f)(x), f(x))


def test_data_dependent_branch_breaks_the_graph_and_matches_eager(device):
    def f(x):
        y = x * 2
        if y.sum() > 0:
            return y.exp()
        return y - 1
    cf = tl.compile(f)
    for sign in (1, -1):
        x = sign * tl.ones(5, device=device)
        _close(cf(x), f(x))
    assert cf.graph_breaks and cf.graph_breaks[0][0] == "item()"


def test_fullgraph_raises_at_the_break_with_file_and_line():
    def f(x):
        return x * int(x.sum())
    with pytest.raises(tl.compiler.GraphBreakError, match=r"test_compile\.py:\d+"):
        tl.compile(f, fullgraph=True)(tl.ones(3))
    assert tl.compile(f)(tl.ones(3)).tolist() == [3.0, 3.0, 3.0]


def test_fullgraph_accepts_linalg_and_fft_host_computations():
    """torch.linalg and torch.fft calls run on the host here (LAPACK, pocketfft through
    numpy): that ends the recorded segment but is no break in the program, so fullgraph=True
    compiles them, as PyTorch's does (timm's Kron optimizer compiles a triangular solve)."""
    def f(a, b):
        upper = tl.linalg.solve_triangular(a.triu() + 3 * tl.eye(4), b, upper=True)
        return (tl.linalg.inv(a @ a.T + tl.eye(4)) @ upper * 2).sum(0) + \
            tl.fft.rfft(b.T).abs().sum()
    a = tl.tensor(np.linspace(-1, 1, 16).reshape(4, 4).astype(np.float32))
    b = tl.tensor(np.linspace(0, 2, 12).reshape(4, 3).astype(np.float32))
    compiled = tl.compile(f, fullgraph=True)
    for _ in range(3):
        _close(compiled(a, b), f(a, b))

    def g(x):                           # the program's own host read still raises
        return tl.linalg.inv(x + tl.eye(2)) * x.sum().item()
    with pytest.raises(tl.compiler.GraphBreakError, match="item"):
        tl.compile(g, fullgraph=True)(tl.ones(2, 2))


def test_errors_are_eagers_errors(device):
    f = tl.compile(lambda a, b: a + b)
    with pytest.raises(RuntimeError, match="size"):
        f(tl.ones(3, device=device), tl.ones(4, device=device))
    assert f(tl.ones(2, device=device), tl.ones(2, device=device)).tolist() == [2.0, 2.0]


def test_shape_changes_give_right_results_and_mark_dynamic():
    f = tl.compile(chain)
    for n in (5, 17, 300, 5):
        x = tl.randn(n)
        _close(f(x), chain(x))
    assert f._dynamic_marked


def test_cache_size_limit_falls_back_to_eager_with_one_warning():
    f = tl.compile(lambda x, k: x * k, dynamic=False)
    old = tl.compiler.config.cache_size_limit
    tl.compiler.config.cache_size_limit = 2
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for k in range(5):
                assert f(tl.ones(2), k).tolist() == [float(k)] * 2
        assert sum("cache_size_limit" in str(w.message) for w in caught) == 1
    finally:
        tl.compiler.config.cache_size_limit = old


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_forward_and_gradients_match_eager(name, device):
    model, x, y = make(name, device)
    compiled = tl.compile(model)
    for _ in range(2):
        model.zero_grad()
        F.cross_entropy(compiled(x), y).backward()
        got = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        out = model(x)
        F.cross_entropy(out, y).backward()
        _close(compiled(x), out, rtol=1e-4, atol=1e-5)
        for g, p in zip(got, model.parameters()):
            _close(g, p.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_twenty_training_steps_match_eager(name, device):
    results = []
    for compiled in (False, True):
        model, x, y = make(name, device)
        opt = tl.optim.Adam(model.parameters(), lr=1e-2)
        fwd = tl.compile(model) if compiled else model
        step = tl.compile(opt.step) if compiled else opt.step
        for _ in range(20):
            opt.zero_grad()
            F.cross_entropy(fwd(x), y).backward()
            step()
        results.append([p.detach().clone() for p in model.parameters()])
    for a, b in zip(*results):
        _close(a, b, rtol=1e-3, atol=1e-4)


def test_compiled_sgd_step_matches_eager():
    results = []
    for compiled in (False, True):
        model, x, y = make("mlp", "cpu")
        opt = tl.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        step = tl.compile(opt.step) if compiled else opt.step
        for _ in range(5):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            step()
        results.append([p.detach().clone() for p in model.parameters()])
    for a, b in zip(*results):
        _close(a, b)


def test_dropout_draws_the_same_numbers_as_eager():
    drop = tl.nn.Dropout(0.5)
    x = tl.ones(1000)
    tl.manual_seed(3)
    want = drop(x)
    tl.manual_seed(3)
    got = tl.compile(drop)(x)
    _close(got, want)


def test_training_flag_is_a_guard():
    model = tl.nn.Sequential(tl.nn.Linear(20, 32), tl.nn.Dropout(0.5), tl.nn.Linear(32, 5))
    x = tl.randn(8, 20)
    compiled = tl.compile(model)
    model.eval()
    _close(compiled(x), model(x))
    model.train()
    tl.manual_seed(1)
    a = compiled(x)
    tl.manual_seed(1)
    _close(a, model(x))


def test_module_compile_in_place_and_optimized_module():
    model, x, _ = make("mlp", "cpu")
    wrapped = tl.compile(model)
    assert list(wrapped.state_dict())[0].startswith("_orig_mod.")
    assert wrapped._orig_mod is model
    # what libraries check to tell a compiled module (PyTorch's name), and it runs the calls
    assert callable(wrapped.dynamo_ctx) and not hasattr(model, "dynamo_ctx")
    _close(wrapped.dynamo_ctx(x), model(x))
    want = model(x)
    model.compile()
    assert type(model).__name__ == "MLP" and isinstance(model, ZOO["mlp"][0])
    _close(model(x), want)
    assert list(model.state_dict())[0] == "net.0.weight"


def test_decorator_forms_and_disable():
    @tl.compile
    def f(x):
        return x + 1

    @tl.compile(fullgraph=True)
    def g(x):
        return helper(x) * 2

    @tl.compiler.disable
    def helper(x):
        return x + float(x.sum())          # would break the graph; runs eagerly instead
    assert f(tl.ones(2)).tolist() == [2.0, 2.0]
    assert g(tl.ones(2)).tolist() == [6.0, 6.0]
    assert tl.compile(f, disable=True) is f


def test_eager_backend_and_bad_backend():
    x = tl.randn(10)
    _close(tl.compile(chain, backend="eager")(x), chain(x))
    with pytest.raises(RuntimeError, match="unknown backend"):
        tl.compile(chain, backend="nope")


def test_custom_backend_receives_a_graph_module_and_example_inputs():
    seen = []

    def my_backend(gm, example_inputs):
        seen.append((gm, example_inputs))
        return gm.forward
    model, x, _ = make("mlp", "cpu")
    compiled = tl.compile(model, backend=my_backend)
    _close(compiled(x), model(x))
    gm, inputs = seen[0]
    assert isinstance(gm, tl.fx.GraphModule) and inputs[0] is x
    assert any(n.op == "call_module" for n in gm.graph.nodes)
    assert all("tensor_meta" in n.meta for n in gm.graph.nodes if n.op == "call_module")


def test_custom_backend_takes_keyword_arguments():
    seen = []

    def my_backend(gm, example_inputs):
        seen.append(len(example_inputs))
        return gm.forward

    def f(x, y, scale=2.0):
        return x * scale + y
    x, y = tl.randn(3), tl.randn(3)
    compiled = tl.compile(f, backend=my_backend)
    _close(compiled(x, y=y), f(x, y))
    _close(compiled(y=y, x=x), f(x, y))
    assert seen[0] == 3

    def g(*xs):
        return xs[0]
    with pytest.raises(NotImplementedError, match=r"\*args"):
        tl.compile(g, backend=my_backend)(x, extra=y)


def test_warm_cache_in_a_new_process_compiles_nothing(tmp_path):
    script = ("import tensorlib as tl\n"
              "from tensorlib_cpu.codegen import BUILDER\n"
              "f = tl.compile(lambda x: ((x * 3 - 2).abs() + 0.25).sqrt())\n"
              "x = tl.randn(1000)\n"
              "assert (f(x) - ((x * 3 - 2).abs() + 0.25).sqrt()).abs().max().item() < 1e-6\n"
              "print(BUILDER.compiled)\n")
    env = dict(os.environ, TENSORLIB_KERNEL_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert int(runs[0].stdout.split()[-1]) >= 1
    assert int(runs[1].stdout.split()[-1]) == 0
    assert any(p.suffix == ".bin" for p in tmp_path.rglob("*"))


def test_graph_break_log(capfd, monkeypatch):
    monkeypatch.setenv("TENSORLIB_LOGS", "graph_breaks")
    tl.compile(lambda x: x * x.sum().item())(tl.ones(2))
    assert "graph break" in capfd.readouterr().err


def test_a_lone_relu_is_one_generated_kernel_equal_to_eager(device):
    """What a declined relu records, maximum(x, 0) alone in its segment, runs as a generated
    kernel (numpy's ufunc took 2.5x longer on the CPU), with eager's NaN and signed zeros."""
    tl.compiler.reset()
    x = tl.tensor([float("nan"), -0.0, 0.0, -1.5, 2.0, float("-inf"), float("inf")] * 300,
                  device=device)
    f = tl.compile(lambda t: tl.relu(t))
    for _ in range(3):
        got, want = _np(f(x)), _np(tl.relu(x))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    specs = [s for p in _plan._PLANS.values() for s in p.fused_specs]
    assert any([st.op for st in s.steps] == ["maximum"] for s in specs)


def test_a_relu_backward_stores_its_gradient_but_not_its_mask(device):
    """`where` broadcasts the mask through a view, whose `_base` refers to the mask: that
    reference is the segment's own, so the mask stays in registers."""
    tl.compiler.reset()
    model = tl.nn.Sequential(tl.nn.Linear(8, 8), tl.nn.ReLU(), tl.nn.Linear(8, 2)).to(device)
    f = tl.compile(model)
    x = tl.randn(4, 8, device=device)
    for _ in range(3):
        model.zero_grad()
        f(x).sum().backward()
    got = model[0].weight.grad
    model.zero_grad()
    model(x).sum().backward()
    _close(got, model[0].weight.grad, rtol=0, atol=0)
    specs = [s for p in _plan._PLANS.values() for s in p.fused_specs]
    if has_kernel("relu_backward", x._device):    # one kernel: the mask never exists
        assert not any(s.operands[st[0]][0] == "bool" for s in specs for st in s.stores)
        return
    backward = [s for s in specs if [st.op for st in s.steps] == ["le", "where"]]
    assert backward and all(len(s.stores) == 1 and s.operands[s.stores[0][0]][0] == "float32"
                            for s in backward)


def test_a_mask_seen_through_a_returned_view_is_stored(device):
    def f(x, g):
        mask = x > 0
        return tl.where(mask, g, 0.0), mask.view(-1)
    x, g = tl.randn(6, 5, device=device), tl.randn(6, 5, device=device)
    c = tl.compile(f)
    for _ in range(3):
        got, got_mask = c(x, g)
        want, want_mask = f(x, g)
        _close(got, want, rtol=0, atol=0)
        np.testing.assert_array_equal(_np(got_mask), _np(want_mask))


def test_large_outputs_stream_around_the_cache_and_equal_the_plain_loop(monkeypatch):
    """Past STREAM_MIN_BYTES the CPU kernel computes blocks and writes them out with
    non-temporal stores: the plain loop's values (bitwise for exact arithmetic; exp within
    its vector variant's ulps, which may differ in a loop's scalar tail), with two outputs and
    a partial last block; an output that is not 16-byte aligned (an in-place write at offset
    1) keeps the plain loop."""
    cg = pytest.importorskip("tensorlib_cpu.codegen")

    def f(x):
        y = x * 2 + 1
        return y.relu().exp(), y * 3

    def g(x):
        x[1:].mul_(2).add_(1)
        return x
    x = tl.randn(3 * cg.STREAM_BLOCK + 7)
    got = {}
    for threshold in (1 << 62, 1):
        monkeypatch.setattr(cg, "STREAM_MIN_BYTES", threshold)
        tl.compiler.reset()
        ff, gg = tl.compile(f), tl.compile(g)
        for _ in range(3):
            outs = [_np(t) for t in ff(x)]
            inplace = _np(gg(x.clone()))
        got[threshold] = outs + [inplace]
    sources = "".join(cg.BUILDER.loaded)
    if "_mm_stream_si128" in cg._STREAM_HELPER and os.uname().machine == "x86_64":
        assert "tl_stream(p" in sources
    plain, streamed = got[1 << 62], got[1]
    np.testing.assert_allclose(streamed[0], plain[0], rtol=1e-6)
    np.testing.assert_array_equal(streamed[1], plain[1])
    np.testing.assert_array_equal(streamed[2], plain[2])
    want = x.clone()
    want[1:].mul_(2).add_(1)
    np.testing.assert_array_equal(got[1][2], _np(want))
    np.testing.assert_allclose(got[1][0], _np(f(x)[0]), rtol=1e-5)


def test_a_compiled_lstm_step_runs_the_fused_cell_both_ways():
    """The fused cell kernels answer whether they took the call, so capture runs them at
    once: the compiled step gives eager's values bit for bit (the composite it would
    otherwise fall back to rounds differently)."""
    tl.manual_seed(0)
    cell = tl.nn.LSTMCell(3, 5).double()
    x = tl.randn(4, 3, dtype=tl.float64)
    h0, c0 = tl.randn(4, 5, dtype=tl.float64), tl.randn(4, 5, dtype=tl.float64)
    if not has_kernel("lstm_cell", x._device):
        pytest.skip("the CPU backend has no fused LSTM cell kernel")

    def step(x, h, c):
        h1, c1 = cell(x, (h, c))
        return (h1 * h1 + c1).sum()

    compiled = tl.compile(step)
    for _ in range(3):                                   # capture, then replays
        cell.zero_grad()
        want = step(x, h0, c0)
        want.backward()
        eager_grads = [p.grad.clone() for p in cell.parameters()]
        cell.zero_grad()
        got = compiled(x, h0, c0)
        got.backward()
        assert got.item() == want.item()
        for p, g in zip(cell.parameters(), eager_grads):
            assert np.array_equal(p.grad.numpy(), g.numpy())
