"""autocast under tensorlib.compile: a compiled module and a compiled function inside
`autocast("cpu", dtype=bfloat16)` give eager autocast's output dtypes and values, forward and
backward; entering autocast records (and plans) a different graph, leaving it reuses the
plain one. torch also recompiles when the autocast state changes (Dynamo's global-state
guard), and so does tensorlib.compile: the autocast state is part of the call's
signature."""
import pytest

import tensorlib
import tensorlib.nn.functional as F
from tensorlib.compiler import plan


def _model():
    tensorlib.manual_seed(0)
    return tensorlib.nn.Sequential(tensorlib.nn.Linear(8, 16), tensorlib.nn.ReLU(),
                                   tensorlib.nn.Linear(16, 4))


def _step(model, x, target):
    out = model(x)
    loss = F.cross_entropy(out, target)
    loss.backward()
    return out, loss


def test_compiled_module_matches_eager_autocast_forward_and_backward():
    x, target = tensorlib.randn(6, 8), tensorlib.tensor([0, 1, 2, 3, 0, 1])
    eager, compiled = _model(), _model()
    fast = tensorlib.compile(compiled)
    for _ in range(2):                                  # the second call runs cached plans
        for m in (eager, compiled):
            m.zero_grad()
        with tensorlib.autocast("cpu", dtype=tensorlib.bfloat16):
            out_e, loss_e = _step(eager, x, target)
            out_c, loss_c = _step(fast, x, target)
        assert out_c.dtype == out_e.dtype == tensorlib.bfloat16
        assert loss_c.dtype == loss_e.dtype == tensorlib.float32    # losses run in float32
        assert tensorlib.equal(out_c, out_e) and tensorlib.equal(loss_c, loss_e)
        for pe, pc in zip(eager.parameters(), compiled.parameters()):
            assert pc.grad.dtype == pe.grad.dtype == tensorlib.float32
            assert tensorlib.allclose(pc.grad, pe.grad, rtol=1e-6, atol=1e-7)


def test_compiled_function_keeps_each_ops_autocast_dtype():
    def fn(a, b):
        scores = a @ b.t()                                  # lower precision on the list
        probs = scores.softmax(-1)                          # keeps its input's dtype
        return scores, probs, (probs * 2 + 1).relu().sum()  # a fused chain, then a sum

    a, b = tensorlib.randn(5, 8), tensorlib.randn(7, 8)
    fast = tensorlib.compile(fn)
    with tensorlib.autocast("cpu", dtype=tensorlib.bfloat16):
        expected = fn(a, b)
        for _ in range(2):
            got = fast(a, b)
            assert [t.dtype for t in got] == [t.dtype for t in expected] == \
                [tensorlib.bfloat16] * 3
            assert all(tensorlib.equal(g, e) for g, e in zip(got, expected))
    plain = fast(a, b)                                      # outside: float32 again
    assert [t.dtype for t in plain] == [tensorlib.float32] * 3
    assert all(tensorlib.allclose(p, e) for p, e in zip(plain, fn(a, b)))


def test_entering_autocast_plans_a_new_graph_and_leaving_reuses_the_plain_one():
    model, x = _model(), tensorlib.randn(3, 8)
    fast = tensorlib.compile(model)

    def plans_after(region):
        with region:
            fast(x)
            fast(x)                          # warm: the steady-state plan exists now
        return set(plan._PLANS)

    from contextlib import nullcontext
    plain = plans_after(nullcontext())
    bf16 = plans_after(tensorlib.autocast("cpu", dtype=tensorlib.bfloat16))
    assert bf16 > plain                                     # new plans: casts, bf16 GEMMs
    assert plans_after(nullcontext()) == bf16               # leaving: nothing new
    assert plans_after(tensorlib.autocast("cpu", dtype=tensorlib.bfloat16)) == bf16
    fp16 = plans_after(tensorlib.autocast("cpu", dtype=tensorlib.float16))
    assert fp16 > bf16                                      # another dtype, another graph


def test_custom_backend_recompiles_on_autocast_changes_as_torch():
    calls = []

    def backend(gm, example_inputs):
        calls.append(1)
        return gm.forward
    fast = tensorlib.compile(_model(), backend=backend)
    x = tensorlib.randn(3, 8)
    counts = []
    for region in (None, tensorlib.bfloat16, None, tensorlib.bfloat16, tensorlib.float16):
        with tensorlib.autocast("cpu", dtype=region or tensorlib.bfloat16,
                                enabled=region is not None):
            fast(x)
        counts.append(len(calls))
    assert counts == [1, 2, 2, 2, 3]                        # what torch 2.13 does


def test_autocast_state_is_a_new_compile_signature():
    fast = tensorlib.compile(lambda t: t @ t.t())
    x = tensorlib.randn(4, 4)
    fast(x)
    with tensorlib.autocast("cpu", dtype=tensorlib.bfloat16):
        fast(x)
    assert len(fast.signatures) == 2                        # counted as a recompile
