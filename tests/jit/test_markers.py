"""The TorchScript markers libraries decorate their code with (torch.jit.unused, ignore,
export, _overload_method, _script_if_tracing, annotate, jit.annotations) leave the Python
code as it runs; torch._C._get_tracing_state tells jit.trace apart."""
import pytest

import tensorlib
import tensorlib.nn as nn
from tensorlib import _C, jit
from tensorlib.jit.annotations import BroadcastingList2


class Marked(nn.Module):
    @jit.unused
    def helper(self, x):
        return x * 3

    @jit.ignore
    def ignored(self, x):
        return x - 1

    @jit.ignore(drop=True)
    def dropped(self, x):
        return x + 10

    @jit.export
    def exported(self, x):
        return x * 0

    @property
    @jit.unused
    def prop(self):
        return 7

    @jit._overload_method
    def forward(self, x: int) -> int:  # noqa: F811 - PyTorch's overload declaration style
        ...

    def forward(self, x):  # noqa: F811
        return self.helper(x) + self.ignored(x) + self.dropped(x) + self.exported(x)


def test_marked_code_runs_as_written():
    m = Marked()
    assert m(tensorlib.tensor([1.0])).tolist() == [3.0 + 0.0 + 11.0 + 0.0]
    assert Marked.helper._torchscript_modifier == "unused"
    assert Marked.dropped._torchscript_modifier == "unused"
    assert Marked.ignored._torchscript_modifier == "ignore"
    assert m.prop == 7
    assert jit.annotate(list, [1]) == [1]
    assert BroadcastingList2[int] is None


def test_script_if_tracing_and_tracing_state():
    states = []

    @jit._script_if_tracing
    def double(x):
        states.append(_C._get_tracing_state() is not None)
        return x * 2

    assert double(tensorlib.ones(1)).tolist() == [2.0]
    traced = jit.trace(lambda x: double(x) + 1, (tensorlib.ones(2),))
    assert traced(tensorlib.zeros(2)).tolist() == [1.0, 1.0]
    assert states[:2] == [False, True] and _C._get_tracing_state() is None


def test_jit_internal_names_libraries_import_directly():
    """Pyro imports torch._jit_internal._copy_to_script_wrapper (a warning, an error under
    its -W error test settings, when it is missing); scripted modules here are the module
    itself, so marked methods stay as they are."""
    from tensorlib import _jit_internal

    def method(self):
        return 7
    assert _jit_internal._copy_to_script_wrapper(method) is method
    assert _jit_internal.is_scripting() is False
    assert _jit_internal.ignore is jit.ignore and _jit_internal.unused is jit.unused


class _PythonForward(nn.Module):
    """A forward TorchScript cannot compile (*args), marked to stay in Python, as
    torchmetrics' Metric marks its own."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Linear(2, 2)

    @jit.unused
    def forward(self, *args, **kwargs):
        return self.scale(args[0])


class _IgnoredForward(_PythonForward):
    @jit.ignore
    def forward(self, *args):
        return args[0] * 2


def test_script_leaves_a_forward_marked_unused_or_ignored_to_python():
    x = tensorlib.ones(2)
    m = _PythonForward()
    scripted = jit.script(m)
    assert tensorlib.equal(scripted(x), m(x))
    assert [n for n, _ in scripted.named_parameters()] == ["scale.weight", "scale.bias"]
    assert scripted.scale.weight is m.scale.weight            # the same parameters
    assert isinstance(scripted, jit.ScriptModule) and isinstance(scripted, _PythonForward)
    assert not isinstance(m, jit.ScriptModule)
    scripted.extra = nn.Parameter(tensorlib.ones(1))          # its own module dicts
    assert "extra" not in dict(m.named_parameters())
    assert jit.script(_IgnoredForward())(x).tolist() == [2.0, 2.0]


def test_an_unmarked_forward_it_cannot_trace_runs_in_python_and_cannot_be_saved(tmp_path):
    class Unmarked(nn.Module):
        def forward(self, *args):
            return args[0]
    scripted = jit.script(Unmarked())
    assert scripted(tensorlib.ones(2)).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="cannot compile Unmarked"):
        jit.save(scripted, str(tmp_path / "u.pt"))
