"""torch._foreach_* (tensorlib/ops/foreach.py) against PyTorch: every name, every argument
form (number, list of numbers, list of tensors, 0-dim tensor), in place and not, the return
types, autograd through the out-of-place forms, and PyTorch's errors."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

SHAPES = [(3,), (2, 4), ()]
UNARY = ["abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
         "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
         "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]
BINARY = ["add", "sub", "mul", "div", "clamp_min", "clamp_max", "maximum", "minimum", "pow"]


def _arrays(seed, low=0.1, high=0.9, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, s).astype(dtype) for s in SHAPES]


def _pair(arrays):
    return ([tl.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays])


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)


def _operand(kind, mine, theirs):
    if kind == "scalar":
        return 0.7, 0.7
    if kind == "scalars":
        return [0.5, 1.5, 2.5], [0.5, 1.5, 2.5]
    if kind == "tensor":
        return tl.tensor(1.25, dtype=tl.float64), torch.tensor(1.25, dtype=torch.float64)
    return mine, theirs


@pytest.mark.parametrize("op", UNARY)
def test_unary_forms_match_torch(op):
    mine, theirs = _pair(_arrays(0))
    got, want = getattr(tl, f"_foreach_{op}")(mine), getattr(torch, f"_foreach_{op}")(theirs)
    assert type(got) is tuple
    _same(got, want)
    back = getattr(tl, f"_foreach_{op}_")(mine)
    getattr(torch, f"_foreach_{op}_")(theirs)
    assert back is mine
    _same(mine, theirs)


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("kind", ["scalar", "scalars", "list", "tensor"])
def test_binary_forms_match_torch(op, kind):
    if kind == "tensor" and op not in ("add", "mul", "div"):
        pytest.skip(f"PyTorch has no _foreach_{op} of one Tensor")
    mine, theirs = _pair(_arrays(1))
    other_mine, other_theirs = _pair(_arrays(2, 0.5, 1.5))
    a, b = _operand(kind, other_mine, other_theirs)
    _same(getattr(tl, f"_foreach_{op}")(mine, a), getattr(torch, f"_foreach_{op}")(theirs, b))
    assert getattr(tl, f"_foreach_{op}_")(mine, a) is mine
    getattr(torch, f"_foreach_{op}_")(theirs, b)
    _same(mine, theirs)


@pytest.mark.parametrize("kind", ["list", "tensor"])
def test_add_and_sub_take_alpha_with_tensors(kind):
    mine, theirs = _pair(_arrays(3))
    a, b = _operand(kind, *_pair(_arrays(4)))
    _same(tl._foreach_add(mine, a, alpha=-2.5), torch._foreach_add(theirs, b, alpha=-2.5))
    if kind == "list":
        tl._foreach_sub_(mine, a, alpha=3)
        torch._foreach_sub_(theirs, b, alpha=3)
        _same(mine, theirs)
    with pytest.raises(TypeError):
        tl._foreach_add(mine, 1.0, alpha=2)


def test_pow_of_a_number_to_each_tensor():
    mine, theirs = _pair(_arrays(5))
    _same(tl._foreach_pow(2.0, mine), torch._foreach_pow(2.0, theirs))


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("value", [1, -0.5, [0.5, 2.0, -1.0], "tensor"])
def test_addcmul_addcdiv_forms(op, value):
    mine, theirs = _pair(_arrays(6))
    t1m, t1t = _pair(_arrays(7))
    t2m, t2t = _pair(_arrays(8, 0.5, 2.0))
    vm, vt = value, value
    if value == "tensor":
        vm, vt = tl.tensor([0.5, 2.0, -1.0]), torch.tensor([0.5, 2.0, -1.0])
    _same(getattr(tl, f"_foreach_{op}")(mine, t1m, t2m, vm),
          getattr(torch, f"_foreach_{op}")(theirs, t1t, t2t, vt))
    getattr(tl, f"_foreach_{op}_")(mine, t1m, t2m, vm)
    getattr(torch, f"_foreach_{op}_")(theirs, t1t, t2t, vt)
    _same(mine, theirs)


@pytest.mark.parametrize("weight", [0.3, [0.1, 0.5, 0.9], "list"])
def test_lerp_forms(weight):
    mine, theirs = _pair(_arrays(9))
    em, et = _pair(_arrays(10))
    wm, wt = (weight, weight) if weight != "list" else _pair(_arrays(11))
    _same(tl._foreach_lerp(mine, em, wm), torch._foreach_lerp(theirs, et, wt))
    tl._foreach_lerp_(mine, em, wm)
    torch._foreach_lerp_(theirs, et, wt)
    _same(mine, theirs)


@pytest.mark.parametrize("ord_", [1, 2, 3, float("inf")])
def test_norm_and_powsum(ord_):
    arrays = _arrays(12, -2.0, 2.0)
    mine, theirs = _pair(arrays)
    _same(tl._foreach_norm(mine, ord_), torch._foreach_norm(theirs, ord_))
    if ord_ != float("inf"):
        _same(tl._foreach_powsum(mine, ord_), torch._foreach_powsum(theirs, ord_))


def test_max_mm_clone_copy_zero():
    mine, theirs = _pair(_arrays(13, -1.0, 1.0))
    _same(tl._foreach_max(mine), torch._foreach_max(theirs))
    mats = [np.random.default_rng(14).standard_normal((2, 3)) for _ in range(2)]
    mats2 = [np.random.default_rng(15).standard_normal((3, 4)) for _ in range(2)]
    _same(tl._foreach_mm([tl.tensor(m) for m in mats], [tl.tensor(m) for m in mats2]),
          torch._foreach_mm([torch.tensor(m) for m in mats], [torch.tensor(m) for m in mats2]))
    clones = tl._foreach_clone(mine)
    assert all(c.data_ptr() != t.data_ptr() for c, t in zip(clones, mine))
    src = [tl.full(t.shape, 4.0, dtype=tl.float64) for t in mine]
    assert tl._foreach_copy_(mine, src) is mine
    assert all((t == 4).all() for t in mine)
    tl._foreach_zero_(mine)
    assert all((t == 0).all() for t in mine) and all((c != 0).all() for c in clones)


def test_out_of_place_forms_carry_gradients():
    xs = [tl.tensor(a, requires_grad=True) for a in _arrays(16)]
    ys = [tl.tensor(a, requires_grad=True) for a in _arrays(17)]
    out = tl._foreach_mul(tl._foreach_exp(xs), ys)
    sum(o.sum() for o in out).backward()
    for x, y in zip(xs, ys):
        np.testing.assert_allclose(x.grad.numpy(), (x.exp() * y).detach().numpy())
        np.testing.assert_allclose(y.grad.numpy(), x.exp().detach().numpy())


def test_errors_are_pytorchs():
    a = [tl.ones(2), tl.ones(3)]
    with pytest.raises(RuntimeError, match="at least one tensor"):
        tl._foreach_add([], 1)
    with pytest.raises(RuntimeError, match="same number of tensors, got 2 and 1"):
        tl._foreach_add(a, [tl.ones(2)])
    with pytest.raises(RuntimeError, match="same number of elements as scalar list"):
        tl._foreach_mul(a, [1.0])
    with pytest.raises(RuntimeError, match="0 dim but it has 1 dimensions and 2 elements"):
        tl._foreach_mul(a, tl.ones(2))
    with pytest.raises(TypeError, match="expected Tensor as element 0"):
        tl._foreach_exp([1.0])
    with pytest.raises(RuntimeError):        # add_ cannot broadcast self to (3,)
        tl._foreach_add_([tl.ones(2)], [tl.ones(3)])
