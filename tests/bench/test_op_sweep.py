"""benchmarks/op_sweep.py: every case runs on tensorlib (as its `torch`), forward and, for
the differentiable ones, backward, so the sweep never reports an error row of ours."""
import importlib.util
import pathlib

import pytest

import tensorlib

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "op_sweep.py"
_spec = importlib.util.spec_from_file_location("op_sweep", _PATH)
op_sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(op_sweep)

CASES = op_sweep._cases(tensorlib, 2048)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_runs_forward_and_backward(name):
    fn, differentiable = CASES[name]
    x = tensorlib.randn(2, 1024)
    assert isinstance(fn(x), tensorlib.Tensor)
    if differentiable:
        a = x.clone().requires_grad_()
        out = fn(a)
        (out.sum() if out.dim() else out).backward()
        assert a.grad is not None and a.grad.shape == a.shape
