"""dynamic_shapes with Dim: exported modules take other sizes on dynamic dims and refuse
sizes outside the range or changed static dims; code that fixes a dynamic size is refused."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.export import Dim, GuardFailed, UserError, export

from tests.export.models import MLP, FixedReshape, SizeBranch, WithKwargs, cnn_eval


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("spec", [{"x": {0: Dim("batch", min=2, max=10)}},
                                  ({0: Dim("batch", min=2, max=10)},),
                                  {"x": (Dim("batch", min=2, max=10), None)}])
def test_batch_dim_accepts_other_sizes_and_refuses_out_of_range(spec):
    m = MLP()
    ep = export(m, (tl.randn(4, 6),), dynamic_shapes=spec)
    mod = ep.module()
    for b in (2, 7, 10):
        x = tl.randn(b, 6)
        _close(mod(x), m(x))
    with pytest.raises(RuntimeError, match=r"x.size\(\)\[0\] <= 10"):
        mod(tl.randn(11, 6))
    with pytest.raises(RuntimeError, match=r"x.size\(\)\[0\] >= 2"):
        mod(tl.randn(1, 6))
    with pytest.raises(RuntimeError, match=r"x.size\(\)\[1\] == 6"):
        mod(tl.randn(4, 5))
    with pytest.raises(RuntimeError, match=r"x.dim\(\) == 2"):
        mod(tl.randn(4, 6, 1))
    assert ep.range_constraints == {"batch": (2, 10)}


def test_guard_error_is_assertion_and_runtime_error():
    # torch 2.13 raises AssertionError("Guard failed: ..."), earlier releases RuntimeError
    assert issubclass(GuardFailed, AssertionError) and issubclass(GuardFailed, RuntimeError)


def test_cnn_with_size_arithmetic_is_dynamic():
    m = cnn_eval()
    ep = export(m, (tl.randn(3, 3, 8, 8),), dynamic_shapes={"x": {0: Dim("batch")}})
    assert any(n.op == "call_method" and n.target == "size" for n in ep.graph.nodes)
    x = tl.randn(6, 3, 8, 8)
    _close(ep.module()(x), m(x))


def test_shared_dim_must_match():
    m = WithKwargs()
    b = Dim("b")
    ep = export(m, (tl.randn(3, 4),), {"mask": tl.ones(3, 4)},
                dynamic_shapes={"x": {0: b}, "mask": {0: b}})
    _close(ep.module()(tl.ones(5, 4), mask=tl.ones(5, 4)), m(tl.ones(5, 4), mask=tl.ones(5, 4)))
    with pytest.raises(RuntimeError, match=r"mask.size\(\)\[0\] == x.size\(\)\[0\]"):
        ep.module()(tl.ones(5, 4), mask=tl.ones(4, 4))
    with pytest.raises(UserError, match="different sizes"):
        export(m, (tl.randn(3, 4),), {"mask": tl.ones(2, 4)},
               dynamic_shapes={"x": {0: b}, "mask": {0: b}})


def test_code_that_fixes_a_dynamic_size_is_refused():
    with pytest.raises(UserError, match=r"Constraints violated \(b\)"):
        export(FixedReshape(), (tl.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b")}})
    with pytest.raises(UserError, match=r"Constraints violated \(b\).*specialized"):
        export(SizeBranch(), (tl.randn(5, 3),), dynamic_shapes={"x": {0: Dim("b")}})


def test_python_loop_over_a_dynamic_dim_is_refused():
    class Loop(tl.nn.Module):
        def forward(self, x):
            return sum(row for row in x.unbind(0))
    assert tl.equal(export(Loop(), (tl.ones(3, 2),)).module()(tl.ones(3, 2)), tl.full((2,), 3.0))
    with pytest.raises(UserError, match=r"Constraints violated \(b\)"):
        export(Loop(), (tl.ones(3, 2),), dynamic_shapes={"x": {0: Dim("b")}})


def test_bad_specs():
    m = MLP()
    with pytest.raises(UserError, match="outside the range"):
        export(m, (tl.randn(4, 6),), dynamic_shapes={"x": {0: Dim("b", min=5)}})
    with pytest.raises(UserError, match="not tensor inputs"):
        export(m, (tl.randn(4, 6),), dynamic_shapes={"y": {0: Dim("b")}})
    with pytest.raises(UserError, match="out of range"):
        export(m, (tl.randn(4, 6),), dynamic_shapes={"x": {2: Dim("b")}})
    with pytest.raises(UserError, match="inconsistent"):
        Dim("b", min=5, max=2)


def test_dim_hints_and_repr():
    assert repr(Dim("batch", min=2, max=10)) == "Dim('batch', min=2, max=10)"
    assert (Dim("b").min, Dim("b").max) == (0, None)
    ep = export(MLP(), (tl.randn(4, 6),), dynamic_shapes={"x": {0: Dim.DYNAMIC, 1: Dim.STATIC}})
    assert ep.module()(tl.randn(9, 6)).shape == (9, 3)
