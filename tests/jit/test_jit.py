"""tensorlib.jit: traces of the model zoo run, save and load without the model's class;
script refuses data-dependent control flow by name."""
import subprocess
import sys

import numpy as np
import pytest

import tensorlib as tl

from tests.compiler.models import ZOO, make


def _close(a, b):
    np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_trace_save_load_round_trip(name, device, tmp_path):
    model, x, _ = make(name, device)
    model.eval()
    traced = tl.jit.trace(model, (x,))
    _close(traced(x), model(x))
    assert "def forward(self, x)" in traced.code and traced.graph is not None
    path = tmp_path / "m.pt"
    traced.save(str(path))
    loaded = tl.jit.load(str(path))
    _close(loaded(x), model(x))


def test_load_needs_no_model_source(tmp_path):
    model, x, _ = make("lenet", "cpu")
    model.eval()
    path = tmp_path / "lenet.pt"
    tl.jit.save(tl.jit.trace(model, x), str(path))
    tl.save(x, str(tmp_path / "x.pt"))
    tl.save(model(x).detach(), str(tmp_path / "y.pt"))
    script = (f"import tensorlib as tl\n"
              f"m = tl.jit.load({str(path)!r})\n"
              f"x, y = tl.load({str(tmp_path / 'x.pt')!r}), tl.load({str(tmp_path / 'y.pt')!r})\n"
              f"assert (m(x) - y).abs().max().item() < 1e-5\n"
              f"import sys; assert not any(k.startswith('tests') for k in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       cwd=str(tmp_path), timeout=120)
    assert r.returncode == 0, r.stderr


def test_trace_follows_the_example_branch_and_warns():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1
    with pytest.warns(tl.jit.TracerWarning):
        traced = tl.jit.trace(f, tl.ones(3))
    assert traced(-tl.ones(3)).tolist() == [-2.0, -2.0, -2.0]     # the traced branch


def test_trace_of_a_function_with_shapes_and_methods():
    def f(x, y):
        return (x @ y).relu().view(x.shape[0], -1).softmax(-1) + 1
    x, y = tl.randn(4, 3), tl.randn(3, 5)
    traced = tl.jit.trace(f, (x, y))
    _close(traced(x, y), f(x, y))


def test_script_accepts_straight_line_modules_and_names_the_bad_construct(tmp_path):
    model, x, _ = make("mlp", "cpu")
    _close(tl.jit.script(model)(x), model(x))

    # a forward that branches on a value, or picks by a shape (einops' layers, by
    # input.ndim), is compiled by TorchScript; here the scripted module runs it in Python,
    # with both branches right, and only saving it says why it has no graph
    class Branchy(tl.nn.Module):
        def forward(self, x):
            return x if x.max() > 0 else -x
    scripted = tl.jit.script(Branchy())
    assert isinstance(scripted, tl.jit.ScriptModule)
    for x in (tl.ones(3), -tl.ones(3)):
        _close(scripted(x), Branchy()(x))
    with pytest.raises(RuntimeError, match="control flow"):
        tl.jit.save(scripted, str(tmp_path / "b.pt"))

    class ByRank(tl.nn.Module):
        def forward(self, x):
            return {2: x.t(), 3: x}[x.ndim]
    x = tl.randn(2, 3)
    _close(tl.jit.script(ByRank())(x), x.t())
    with pytest.raises(RuntimeError, match="raised KeyError.*use tensorlib.jit.trace"):
        tl.jit.script(ByRank()).save(str(tmp_path / "r.pt"))
    _close(tl.jit.trace(ByRank(), (x,))(x), x.t())


def test_script_fixes_python_valued_arguments_at_their_defaults():
    """A forward that branches on a `pre_logits: bool = False` argument (timm's pools) is
    scripted as a graph with the argument at its default; a call passing another value runs
    the module's forward."""
    class Pool(tl.nn.Module):
        final_dim: tl.jit.Final[int]

        def __init__(self):
            super().__init__()
            self.proj = tl.nn.Linear(3, 2)

        def forward(self, x, pre_logits: bool = False, scale: float = 1.0):
            x = x.mean(1) * scale
            if pre_logits:
                return x
            return self.proj(x)

    pool, x = Pool(), tl.randn(4, 5, 3)
    scripted = tl.jit.script(pool)
    _close(scripted(x), pool(x))
    _close(scripted(x, False, scale=1.0), pool(x))
    assert list(scripted.graph.nodes)[1].op != "placeholder"    # fixed, not an input
    # another value takes the module's own forward (positional ones found by its signature)
    _close(scripted(x, pre_logits=True), pool(x, pre_logits=True))
    _close(scripted(x, False, 2.0), pool(x, False, 2.0))
    assert "_eager" not in dict(scripted.named_children())

    class Straight(tl.nn.Module):       # no branch on it: the argument stays an input
        def forward(self, x, scale: float = 1.0):
            return x * scale
    _close(tl.jit.script(Straight())(x, 2.0), x * 2.0)


def test_load_rejects_foreign_files_and_targets(tmp_path):
    path = tmp_path / "t.pt"
    tl.save({"format": "tensorlib.jit/1", "name": "M", "training": False, "attrs": {},
             "graph": [{"op": "placeholder", "name": "x", "target": "x", "args": {"tuple": []},
                        "kwargs": {"dict": {}}},
                       {"op": "call_function", "name": "bad", "target": "os.system",
                        "args": {"tuple": ["echo hi"]}, "kwargs": {"dict": {}}}]}, str(path))
    with pytest.raises(RuntimeError, match="unknown call target"):
        tl.jit.load(str(path))
    tl.save({"a": 1}, str(path))
    with pytest.raises(RuntimeError, match="not a file"):
        tl.jit.load(str(path))


def test_scripted_functions_that_tracing_cannot_compile_still_run():
    # libraries script helpers at import (`@torch.jit.script`): a body that calls another
    # scripted function, writes through out= or branches on a value runs as Python, and only
    # asking for its graph (or saving it) raises the reason
    @tl.jit.script
    def clamp_to_one(x):
        return x if x.max() <= 1 else x / x.max()

    @tl.jit.script
    def scaled(x, out):
        tl.mul(clamp_to_one(x), 3, out=out)
        return out

    x = tl.tensor([1.0, 4.0])
    np.testing.assert_allclose(scaled(x, tl.empty(2)).numpy(), [0.75, 3.0])
    assert scaled.__name__ == "scaled"
    with pytest.raises(RuntimeError, match="control flow"):
        clamp_to_one.graph
    with pytest.raises(RuntimeError, match="cannot compile .*clamp_to_one"):
        tl.jit.save(clamp_to_one, "unused.tlj")


def test_script_returns_a_plain_class_itself_and_refuses_a_module_class():
    """torch.jit.script(cls) compiles a TorchScript class and hands back the class (PyG
    scripts its SelectOutput/ConnectOutput dataclasses at import); a Module class is refused
    with PyTorch's message."""
    from dataclasses import dataclass

    @dataclass
    class Output:
        node_index: tl.Tensor

    class Plain:
        def __init__(self, x: int):
            self.x = x

    assert tl.jit.script(Output) is Output and tl.jit.script(Plain) is Plain
    assert isinstance(tl.jit.script(Output)(tl.ones(2)), Output)

    class Net(tl.nn.Module):
        def forward(self, x):
            return x

    with pytest.raises(RuntimeError, match="cannot be compiled since it inherits from "
                                           "nn.Module, pass an instance instead"):
        tl.jit.script(Net)
