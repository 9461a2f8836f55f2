"""gradcheck (float64) of every registered differentiable op on contiguous, non-contiguous
(transposed, sliced) and broadcast (expanded) inputs, and gradgradcheck of elementwise ops,
reductions and matmul, on every test device (the `device` fixture; a device without float64
skips). The inputs live on the device, the function's outputs must too, and gradcheck
perturbs them there and compares on the host. The cases live in op_cases.py."""
import inspect

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck
from tensorlib.autograd.recording import FORMULAS

from ._util import assert_on, on_device, require_float64
from .op_cases import CASES, NOT_COVERED, draw_inputs


def _leaf(values, layout, device):
    values = np.asarray(values, dtype=np.float64)
    if layout == "transposed":
        t = tl.tensor(np.ascontiguousarray(np.swapaxes(values, -1, -2)),
                      device=device).transpose(-1, -2)
        assert not t.is_contiguous() or min(values.shape[-2:]) <= 1
    elif layout == "sliced":
        wide = np.zeros(values.shape[:-1] + (2 * values.shape[-1],))
        wide[..., ::2] = values
        t = tl.tensor(wide, device=device)[..., ::2]
        assert not t.is_contiguous() or values.shape[-1] <= 1
    else:
        t = tl.tensor(values, device=device)
    assert t.dtype == tl.float64 and on_device(t, device)
    return t.detach().requires_grad_()


def _build(case, layout, device, seed=0):
    """The leaves and the function of them that gradcheck sees for one case and layout."""
    shapes = case.shapes
    leaf_shapes = list(shapes)
    leaf_layouts = ["contiguous"] * len(shapes)
    expands = [None] * len(shapes)
    if layout == "broadcast":
        if "distinct" in case.domain:
            pytest.skip("repeated values make ties (not differentiable)")
        for i, s in enumerate(shapes):
            if len(s) >= 1 and s[0] > 1:
                leaf_shapes[i] = (1,) + s[1:]
                expands[i] = s
    elif layout == "transposed":
        leaf_layouts = ["transposed" if len(s) >= 2 else "contiguous" for s in shapes]
    elif layout == "sliced":
        leaf_layouts = ["sliced" if len(s) >= 1 else "contiguous" for s in shapes]
    if layout != "contiguous" and leaf_layouts == ["contiguous"] * len(shapes) \
            and expands == [None] * len(shapes):
        pytest.skip(f"no input of {case.name} can be laid out as {layout}")
    values = draw_inputs(case, leaf_shapes, seed)
    leaves = [_leaf(v, lay, device) for v, lay in zip(values, leaf_layouts)]

    def fn(*xs):
        return case.fn(*(x if e is None else x.expand(*e) for x, e in zip(xs, expands)))
    return fn, leaves


def _require(case, device):
    require_float64(device)
    if case.cpu_only and tl.device(device).type != "cpu":
        pytest.skip(f"{case.name}: complex values are CPU-only so far")
    missing = [name for name in case.covers if name not in FORMULAS]
    if missing:
        pytest.skip(f"no derivative registered for {missing} yet")
    try:
        with tl.no_grad():
            fn, leaves = _build(case, "contiguous", device)
            outs = fn(*leaves)
    except (AttributeError, ImportError) as e:
        if tl.device(device).type != "cpu":
            _require(case, "cpu")       # an op missing everywhere skips; only here fails
            raise
        pytest.skip(f"{case.name}: op not available ({e})")
    assert_on(device, *(outs if isinstance(outs, (tuple, list)) else (outs,)))


def _applies(case, layout):
    shapes = case.shapes
    if layout == "transposed":
        return any(len(s) >= 2 for s in shapes)
    if layout == "sliced":
        return any(len(s) >= 1 for s in shapes)
    if layout == "broadcast":
        # expanded values repeat, so ops needing distinct values would meet ties
        return "distinct" not in case.domain and any(len(s) >= 1 and s[0] > 1 for s in shapes)
    return True


def _params(with_layouts):
    out = []
    for case in CASES:
        for layout in (case.layouts if with_layouts else ("contiguous",)):
            if _applies(case, layout):
                out.append(pytest.param(case, layout, id=f"{case.name}-{layout}"))
    return out


@pytest.mark.parametrize("case, layout", _params(True))
def test_gradcheck(case, layout, device):
    _require(case, device)
    fn, leaves = _build(case, layout, device)
    assert gradcheck(fn, leaves, atol=case.atol, rtol=case.rtol)


@pytest.mark.parametrize("case, layout", [p for p in _params(False) if p.values[0].gradgrad])
def test_gradgradcheck(case, layout, device):
    _require(case, device)
    fn, leaves = _build(case, layout, device)
    assert gradgradcheck(fn, leaves, atol=case.atol, rtol=case.rtol)


@pytest.mark.parametrize("case", [c for c in CASES if c.gradgrad and len(c.shapes[0]) >= 2],
                         ids=lambda c: c.name)
def test_gradgradcheck_transposed(case, device):
    _require(case, device)
    fn, leaves = _build(case, "transposed", device)
    assert gradgradcheck(fn, leaves, atol=case.atol, rtol=case.rtol)


def test_every_formula_is_covered():
    covered = {name for case in CASES for name in case.covers}
    missing = sorted(set(FORMULAS) - covered - set(NOT_COVERED))
    assert not missing, (f"registered derivatives without a gradcheck case: {missing}; add "
                         f"a Case to tests/autograd/op_cases.py")


def _decorated_ops():
    """(module, function name, recorded op name) for every @differentiable op."""
    found = set()
    for modname in dir(tl.ops):
        module = getattr(tl.ops, modname)
        if not inspect.ismodule(module) or not module.__name__.startswith("tensorlib.ops"):
            continue
        for name, obj in vars(module).items():
            op_name = getattr(obj, "op_name", None)
            if isinstance(op_name, str):
                found.add((module.__name__, name, op_name))
    return sorted(found)


def test_every_differentiable_op_has_a_formula():
    """An op decorated @differentiable without a registered derivative fails the moment a
    tensor requiring grad goes through it."""
    missing = [f"{m}.{n} ({op})" for m, n, op in _decorated_ops() if op not in FORMULAS]
    assert not missing, f"@differentiable ops with no formula registered: {missing}"
