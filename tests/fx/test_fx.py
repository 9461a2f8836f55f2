"""tensorlib.fx: symbolic traces of the model zoo run and match the modules; the Graph,
GraphModule, Interpreter, Transformer and rewriter behave as PyTorch FX's."""
import operator

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib import fx

from tests.compiler.models import ZOO, make


def _close(a, b):
    np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(), rtol=1e-5,
                               atol=1e-6)


class Custom(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 8)
        self.scale = nn.Parameter(tl.ones(8))
        self.register_buffer("shift", tl.full((8,), 0.5))

    def forward(self, x):
        h = F.relu(self.lin(x)) * self.scale + self.shift
        return tl.tanh(h).view(h.shape[0], -1).sum(-1, keepdim=True)


@pytest.mark.parametrize("name", sorted(n for n in ZOO if n != "lstm"))
def test_zoo_traces_run_and_match(name, device):
    model, x, _ = make(name, device)
    gm = fx.symbolic_trace(model)
    _close(gm(x), model(x))
    assert isinstance(gm, nn.Module) and "def forward(self" in gm.code
    assert {n.op for n in gm.graph.nodes} >= {"placeholder", "call_module", "output"}


def test_lstm_is_a_leaf_module():
    model, x, _ = make("lstm", "cpu")
    gm = fx.symbolic_trace(model)
    assert [n.target for n in gm.graph.nodes if n.op == "call_module"] == ["lstm", "head"]
    _close(gm(x), model(x))


def test_custom_module_nodes_and_parameters():
    m = Custom()
    gm = fx.symbolic_trace(m)
    ops = [(n.op, n.target) for n in gm.graph.nodes]
    assert ("call_module", "lin") in ops and ("get_attr", "scale") in ops
    assert ("get_attr", "shift") in ops
    assert ("call_function", F.relu) in ops and ("call_function", operator.mul) in ops
    assert ("call_method", "view") in ops
    assert gm.scale is m.scale                          # parameters are shared, not copied
    x = tl.randn(3, 4)
    _close(gm(x), m(x))
    assert "relu = tensorlib.nn.functional.relu(lin)" in gm.code


def test_data_dependent_control_flow_raises_trace_error():
    def f(x):
        return x if x.sum() > 0 else -x
    with pytest.raises(fx.TraceError):
        fx.symbolic_trace(f)


def test_tracer_is_leaf_module_override():
    class Everything(fx.Tracer):
        def is_leaf_module(self, m, name):
            return False
    graph = Everything().trace(Custom())
    assert not any(n.op == "call_module" for n in graph.nodes)


def test_shape_prop_fills_meta():
    gm = fx.symbolic_trace(Custom())
    fx.passes.shape_prop.ShapeProp(gm).propagate(tl.randn(3, 4))
    meta = {n.name: n.meta.get("tensor_meta") for n in gm.graph.nodes}
    assert tuple(meta["lin"].shape) == (3, 8) and meta["lin"].dtype == tl.float32


def test_interpreter_and_transformer():
    m = Custom()
    gm = fx.symbolic_trace(m)
    x = tl.randn(2, 4)
    _close(fx.Interpreter(gm).run(x), m(x))

    class ReluToSigmoid(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is F.relu:
                target = tl.sigmoid
            return super().call_function(target, args, kwargs)
    new = ReluToSigmoid(gm).transform()
    h = tl.sigmoid(m.lin(x)) * m.scale + m.shift
    _close(new(x), tl.tanh(h).view(2, -1).sum(-1, keepdim=True))


def test_graph_editing_and_dead_code():
    gm = fx.symbolic_trace(lambda x: (x + 1) * 2)
    add = next(n for n in gm.graph.nodes if n.target is operator.add)
    with gm.graph.inserting_after(add):
        neg = gm.graph.call_function(operator.neg, (add,))
    add.replace_all_uses_with(neg, delete_user_cb=lambda u: u is not neg)
    gm.graph.lint()
    gm.recompile()
    assert gm(tl.ones(1)).tolist() == [-4.0]
    gm.graph.call_function(tl.exp, (neg,))              # unused: removed by DCE
    assert gm.graph.eliminate_dead_code()
    with pytest.raises(RuntimeError, match="users"):
        gm.graph.erase_node(neg)


def test_replace_pattern():
    def f(x):
        return tl.relu(x) + tl.relu(x * 2)

    def pattern(a):
        return tl.relu(a)

    def replacement(a):
        return tl.clamp(a, min=0)
    gm = fx.symbolic_trace(f)
    matches = fx.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2
    assert not any(n.target is tl.relu for n in gm.graph.nodes)
    x = tl.randn(10)
    _close(gm(x), f(x))


def test_print_readable_and_graph_str(capsys):
    gm = fx.symbolic_trace(Custom())
    text = gm.print_readable(print_output=False)
    assert text.startswith("class Custom(")
    assert "%lin : [num_users=1] = call_module[target=lin]" in str(gm.graph)


def test_a_none_default_keeps_the_input_optional():
    """`forward(self, x, mask=None)` traces to `forward(self, x, mask = None)`, as in
    torch.fx: callers leave it out (timm's ViT blocks through jit.script)."""
    class Masked(tl.nn.Module):
        def forward(self, x, mask=None, scale=3):
            return x * scale
    gm = fx.symbolic_trace(Masked())
    assert "mask = None" in gm.code and "scale = 3" in gm.code
    placeholders = [n.args for n in gm.graph.nodes if n.op == "placeholder"]
    assert placeholders == [(), (None,), (3,)]
    assert gm(tl.ones(2)).tolist() == [3.0, 3.0]
    assert tl.jit.script(Masked())(tl.ones(2)).tolist() == [3.0, 3.0]
    copied = fx.Transformer(gm).transform()
    assert "mask = None" in copied.code
