"""bmm ... baddbmm, einsum, tensordot, kron and tensorlib.linalg norms: values against numpy in
float64 over layouts and devices, random einsum equations (hypothesis) against np.einsum,
errors and dtypes against PyTorch, derivatives (gradcheck, gradgradcheck)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl
import tensorlib.linalg as LA
from tensorlib.autograd import gradcheck, gradgradcheck
from tests.ops.layouts import LAYOUTS, make

rng = np.random.default_rng(5)


def _t(a, device="cpu"):
    return tl.tensor(a, device=device)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_products(layout, device):
    m = make(rng.standard_normal((3, 4)), layout, device)
    a = m.cpu().numpy()
    v, w = rng.standard_normal(4), rng.standard_normal(3)
    b3, c3 = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    inp = rng.standard_normal((3, 5))
    cases = [
        (tl.mv(m, _t(v, device)), a @ v),
        (m.mv(_t(v, device)), a @ v),
        (tl.dot(_t(v, device), _t(v, device)), v @ v),
        (tl.vdot(_t(w, device), _t(w, device)), w @ w),
        (tl.inner(m, _t(rng.standard_normal((2, 4)) * 0 + 1, device)), a @ np.ones((2, 4)).T),
        (tl.inner(m, _t(np.array(2.0), device)), a * 2),
        (tl.outer(_t(w, device), _t(v, device)), np.outer(w, v)),
        (tl.ger(_t(w, device), _t(v, device)), np.outer(w, v)),
        (tl.bmm(_t(b3, device), _t(c3, device)), b3 @ c3),
        (tl.addmm(_t(inp, device), m, _t(c3[0], device), beta=0.5, alpha=2),
         0.5 * inp + 2 * a @ c3[0]),
        (tl.addmm(_t(inp[0], device), m, _t(c3[0], device)), inp[0] + a @ c3[0]),
        (tl.addmv(_t(w, device), m, _t(v, device), alpha=-1), w - a @ v),
        (tl.baddbmm(_t(inp, device), _t(b3, device), _t(c3, device), beta=2),
         2 * inp + b3 @ c3),
        (tl.addbmm(_t(inp, device), _t(b3, device), _t(c3, device)), inp + (b3 @ c3).sum(0)),
        (tl.addr(_t(a, device), _t(w, device), _t(v, device)), a + np.outer(w, v)),
        (tl.kron(m, _t(c3[0, :2], device)), np.kron(a, c3[0, :2])),
        (tl.kron(_t(v, device), _t(b3, device)), np.kron(v, b3)),
        (tl.tensordot(_t(b3, device), _t(c3, device), dims=([2], [1])),
         np.tensordot(b3, c3, axes=([2], [1]))),
        (tl.tensordot(m, _t(c3[0], device), 1), a @ c3[0]),
        (tl.tensordot(m, m, 2), np.tensordot(a, a, 2)),
    ]
    for got, expected in cases:
        np.testing.assert_allclose(got.cpu().numpy(), expected, rtol=1e-12, atol=1e-12)


def test_beta_zero_ignores_nan_input():
    inp = tl.full((2, 2), float("nan"), dtype=tl.float64)
    out = tl.addmm(inp, tl.tensor(np.eye(2)), tl.ones(2, 2, dtype=tl.float64), beta=0)
    assert out.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_inplace_products():
    x = tl.ones(2, 3, dtype=tl.float64)
    version = x._version
    x.addmm_(tl.ones(2, 4, dtype=tl.float64), tl.ones(4, 3, dtype=tl.float64), alpha=0.5)
    assert x.tolist() == [[3.0] * 3] * 2 and x._version > version


EINSUM_FIXED = [
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii", [(4, 4)]), ("ii->i", [(4, 4)]), ("iij->j", [(3, 3, 2)]), ("ij->ji", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]), ("i,i->", [(3,), (3,)]), ("ij,jk", [(2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]), ("...i->...", [(2, 3, 4)]),
    ("i...->...", [(2, 3, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,cd,bd->ac", [(2, 3), (4, 5), (3, 5)]), ("ij,ij->ij", [(3, 4), (1, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("i,->i", [(3,), ()]),
    ("Ab,bA->A", [(3, 4), (4, 3)]),
]


@pytest.mark.parametrize("equation,shapes", EINSUM_FIXED)
def test_einsum_fixed(equation, shapes, device):
    arrays = [rng.standard_normal(s) for s in shapes]
    got = tl.einsum(equation, *[_t(a, device) for a in arrays])
    np.testing.assert_allclose(got.cpu().numpy(), np.einsum(equation, *arrays), rtol=1e-12,
                               atol=1e-12)
    listed = tl.einsum(equation, [_t(a, device) for a in arrays])
    np.testing.assert_allclose(listed.cpu().numpy(), got.cpu().numpy())


def test_einsum_non_contiguous():
    a = rng.standard_normal((4, 3))
    b = rng.standard_normal((5, 4))
    got = tl.einsum("ij,jk->ik", _t(a).t(), _t(b).t())
    np.testing.assert_allclose(got.numpy(), a.T @ b.T, rtol=1e-12)
    got = tl.einsum("ii->i", make(rng.standard_normal((3, 3)), "strided"))
    assert got.shape == (3,)


@st.composite
def einsum_cases(draw):
    """A random valid equation over 1-3 operands with shared, repeated, summed and broadcast
    (size-1) labels, explicit or implicit output."""
    letters = "abcdef"
    sizes = {c: draw(st.integers(1, 3)) for c in letters}
    n_ops = draw(st.integers(1, 3))
    terms, arrays = [], []
    for _ in range(n_ops):
        term = draw(st.lists(st.sampled_from(letters), min_size=0, max_size=4))
        shape = [sizes[c] for c in term]
        if term and draw(st.booleans()):                   # one label broadcast from 1
            i = draw(st.integers(0, len(term) - 1))
            if term.count(term[i]) == 1:
                shape[i] = 1
        terms.append("".join(term))
        arrays.append(rng.standard_normal(shape))
    used = sorted(set("".join(terms)))
    if draw(st.booleans()):
        out = draw(st.lists(st.sampled_from(used), unique=True)) if used else []
        return ",".join(terms) + "->" + "".join(out), arrays
    return ",".join(terms), arrays


@given(einsum_cases())
def test_einsum_random(case):
    equation, arrays = case
    try:
        expected = np.einsum(equation, *arrays)
    except ValueError:                 # numpy refuses some size-1 broadcasts of labels
        return
    got = tl.einsum(equation, *[_t(a) for a in arrays])
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-10)


@given(st.lists(st.integers(1, 3), min_size=0, max_size=3),
       st.lists(st.integers(1, 3), min_size=0, max_size=2), st.integers(1, 2))
def test_tensordot_random(shared, extra, tail):
    a = rng.standard_normal(extra + shared)
    b = rng.standard_normal(shared + [tail])
    got = tl.tensordot(_t(a), _t(b), len(shared))
    np.testing.assert_allclose(got.numpy(), np.tensordot(a, b, len(shared)), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_linalg_norms(layout, device):
    x = make(rng.standard_normal((3, 4)), layout, device)
    a = x.cpu().numpy()
    b = rng.standard_normal((2, 3, 4))
    cases = [
        (LA.vector_norm(x), np.linalg.norm(a.ravel())),
        (LA.vector_norm(x, 1, 1), np.linalg.norm(a, 1, axis=1)),
        (LA.vector_norm(x, float("inf"), 0, keepdim=True),
         np.abs(a).max(0, keepdims=True)),
        (LA.vector_norm(x, -float("inf")), np.abs(a).min()),
        (LA.vector_norm(x, 0), np.count_nonzero(a)),
        (LA.vector_norm(x, 0.5, (0, 1)), (np.abs(a) ** 0.5).sum() ** 2),
        (LA.matrix_norm(x), np.linalg.norm(a, "fro")),
        (LA.matrix_norm(x, 1), np.linalg.norm(a, 1)),
        (LA.matrix_norm(x, -1), np.linalg.norm(a, -1)),
        (LA.matrix_norm(x, float("inf")), np.linalg.norm(a, np.inf)),
        (LA.matrix_norm(x, -float("inf"), keepdim=True),
         np.linalg.norm(a, -np.inf, keepdims=True)),
        (LA.matrix_norm(_t(b, device), 1), np.linalg.norm(b, 1, axis=(1, 2))),
        (LA.matrix_norm(_t(b, device), 1, dim=(0, 2)), np.linalg.norm(b, 1, axis=(0, 2))),
        (LA.norm(x), np.linalg.norm(a)),
        (LA.norm(x, float("inf")), np.linalg.norm(a, np.inf)),
        (LA.norm(x, 3, dim=1), np.linalg.norm(a, 3, axis=1)),
        (LA.norm(_t(b, device)), np.linalg.norm(b.ravel())),
        (LA.norm(_t(b, device), 1, dim=(1, 2)), np.linalg.norm(b, 1, axis=(1, 2))),
        (LA.vector_norm(x.float(), dtype=tl.float64), np.linalg.norm(a.astype(np.float32).astype(np.float64))),
    ]
    for got, expected in cases:
        np.testing.assert_allclose(got.cpu().numpy(), expected, rtol=1e-6 if got.dtype
                                   is tl.float32 else 1e-12)


def test_dtypes_match_torch():
    torch = pytest.importorskip("torch")
    pairs = [(tl.outer, torch.outer, (tl.int64, tl.float32)),
             (tl.kron, torch.kron, (tl.int32, tl.float64)),
             (tl.dot, torch.dot, (tl.int64, tl.int64)),
             (tl.inner, torch.inner, (tl.float32, tl.float32))]
    for ours, theirs, dtypes in pairs:
        a = ours(*[tl.ones(3, dtype=d) for d in dtypes])
        b = theirs(*[torch.ones(3, dtype=getattr(torch, str(d).split(".")[-1]))
                     for d in dtypes])
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert LA.vector_norm(tl.ones(3, dtype=tl.float16)).dtype is tl.float16


ERRORS = [
    (lambda: tl.dot(tl.ones(3), tl.ones(3, dtype=tl.float64)), "same dtype"),
    (lambda: tl.dot(tl.ones(3), tl.ones(2)), "inconsistent tensor size"),
    (lambda: tl.dot(tl.ones(3, 1), tl.ones(3)), "1D tensors expected, but got 2D and 1D"),
    (lambda: tl.mv(tl.ones(3), tl.ones(3)), "vector \\+ matrix @ vector expected"),
    (lambda: tl.bmm(tl.ones(3), tl.ones(3)), "batch1 must be a 3D tensor"),
    (lambda: tl.bmm(tl.ones(2, 3, 4), tl.ones(3, 4, 5)), "first two dimensions of batch2"),
    (lambda: tl.outer(tl.ones(3, 1), tl.ones(3)), "outer: Expected 1-D argument self"),
    (lambda: tl.inner(tl.ones(1, 3), tl.ones(2, 2)), "last dimension must match"),
    (lambda: tl.tensordot(tl.ones(2, 3), tl.ones(4, 2), dims=([1], [0])),
     "contracted dimensions need to match"),
    (lambda: tl.addmm(tl.ones(3), tl.ones(2, 2), tl.ones(2, 2)), "expanded size"),
    (lambda: tl.einsum("ij,jk", tl.ones(2, 3), tl.ones(3, 4, dtype=tl.float64)), "dtype"),
    (lambda: tl.einsum("ij,jk", tl.ones(2, 3)), "fewer operands"),
    (lambda: tl.einsum("ij", tl.ones(2, 3), tl.ones(2)), "more operands"),
    (lambda: tl.einsum("ijk", tl.ones(2, 3)), "number of subscripts"),
    (lambda: tl.einsum("ij->k", tl.ones(2, 3)), "output subscript k does not appear"),
    (lambda: tl.einsum("ij->ii", tl.ones(2, 3)), "more than once"),
    (lambda: tl.einsum("ii", tl.ones(2, 3)), "sizes don't match"),
    (lambda: tl.einsum("ij,jk", tl.ones(2, 3), tl.ones(4, 2)), "broadcast"),
    (lambda: tl.einsum("i1", tl.ones(2, 3)), "invalid subscript"),
    (lambda: LA.matrix_norm(tl.ones(3)), "at least 2 dimensions"),
    (lambda: LA.vector_norm(tl.tensor([1, 2])), "floating point"),
    (lambda: LA.norm(tl.ones(2, 2, 2), 1), "must be 1D or 2D"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    fn, message = ERRORS[case]
    with pytest.raises(RuntimeError, match=message):
        fn()


@pytest.mark.parametrize("ord_", ["nuc", 2, -2])
def test_svd_norms(ord_):
    """The singular-value norms (through linalg.svdvals), over any two dims, keepdim too."""
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((3, 2, 4))
    for dims, keepdim in [((-2, -1), False), ((0, 2), True)]:
        got = LA.matrix_norm(tl.tensor(a), ord_, dims, keepdim).numpy()
        want = torch.linalg.matrix_norm(torch.tensor(a), ord_, dims, keepdim).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-10)


# ---- derivatives ---------------------------------------------------------------------------
def _leaf(*shape):
    return tl.tensor(rng.standard_normal(shape), dtype=tl.float64, requires_grad=True)


GRAD = {
    "bmm": (tl.bmm, lambda: (_leaf(2, 3, 4), _leaf(2, 4, 2))),
    "mv": (tl.mv, lambda: (_leaf(3, 4), _leaf(4))),
    "dot": (tl.dot, lambda: (_leaf(4), _leaf(4))),
    "inner": (tl.inner, lambda: (_leaf(2, 4), _leaf(3, 4))),
    "outer": (tl.outer, lambda: (_leaf(3), _leaf(4))),
    "addmm": (lambda i, a, b: tl.addmm(i, a, b, beta=0.5, alpha=-2),
              lambda: (_leaf(1, 2), _leaf(3, 4), _leaf(4, 2))),
    "addmv": (lambda i, a, b: tl.addmv(i, a, b, beta=2), lambda: (_leaf(3), _leaf(3, 4),
                                                                   _leaf(4))),
    "addbmm": (tl.addbmm, lambda: (_leaf(3, 2), _leaf(2, 3, 4), _leaf(2, 4, 2))),
    "baddbmm": (lambda i, a, b: tl.baddbmm(i, a, b, alpha=0.5),
                lambda: (_leaf(3, 1), _leaf(2, 3, 4), _leaf(2, 4, 2))),
    "tensordot": (lambda a, b: tl.tensordot(a, b, ([0, 2], [1, 0])),
                  lambda: (_leaf(2, 3, 4), _leaf(4, 2, 2))),
    "kron": (tl.kron, lambda: (_leaf(2, 2), _leaf(2, 3))),
    "einsum_attention": (lambda q, k: tl.einsum("bhqd,bhkd->bhqk", q, k),
                         lambda: (_leaf(1, 2, 3, 2), _leaf(1, 2, 2, 2))),
    "einsum_trace": (lambda a: tl.einsum("ii", a), lambda: (_leaf(3, 3),)),
    "einsum_diag_ellipsis": (lambda a, b: tl.einsum("...ii,...i->...", a, b),
                             lambda: (_leaf(2, 3, 3), _leaf(3))),
    "einsum_three": (lambda a, b, c: tl.einsum("ij,jk,kl->il", a, b, c),
                     lambda: (_leaf(2, 3), _leaf(3, 2), _leaf(2, 2))),
    "vector_norm": (lambda a: LA.vector_norm(a, 3, 1), lambda: (_leaf(3, 4),)),
    "vector_norm_inf": (lambda a: LA.vector_norm(a, float("inf")), lambda: (_leaf(3, 4),)),
    "matrix_norm_1": (lambda a: LA.matrix_norm(a, 1), lambda: (_leaf(2, 3, 4),)),
    "matrix_norm_fro": (lambda a: LA.matrix_norm(a), lambda: (_leaf(3, 4),)),
    "matrix_norm_inf": (lambda a: LA.norm(a, float("inf")), lambda: (_leaf(3, 4),)),
}


@pytest.mark.parametrize("name", sorted(GRAD))
def test_gradients(name):
    fn, make_inputs = GRAD[name]
    inputs = make_inputs()
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_gradients_non_contiguous_and_broadcast():
    a, b = _leaf(4, 3), _leaf(2, 4)
    assert gradcheck(lambda x, y: tl.einsum("ij,jk->ik", x.t(), y.t()), (a, b))
    assert gradcheck(lambda x, y: tl.bmm(x.t().expand(2, 3, 4), y.t().expand(2, 4, 2)), (a, b))
    assert gradcheck(lambda x, y: tl.tensordot(x.t(), y.t(), 1), (a, b))
    assert gradcheck(lambda x: LA.matrix_norm(x.t(), -1), (a,))
    v = _leaf(1)
    assert gradcheck(lambda x, y: tl.mv(x.t(), y.expand(4)), (a, v))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("ord_", [2, 1, 3, float("inf"), 0])
def test_half_precision_vector_norms_round_once_as_pytorch(dtype, ord_):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for shape, dim in (((1000,), None), ((37, 53), 1), ((8, 300), (0, 1))):
        a = rng.standard_normal(shape).astype(np.float32)
        want = torch.linalg.vector_norm(torch.tensor(a).to(getattr(torch, dtype)), ord_, dim)
        got = tl.linalg.vector_norm(tl.tensor(a).to(getattr(tl, dtype)), ord_, dim)
        assert got.dtype == getattr(tl, dtype)
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op", ["addmm", "addmv", "baddbmm", "addbmm", "addr"])
def test_half_precision_add_products_round_once_as_pytorch(dtype, op):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    shapes = {"addmm": [(5, 7), (5, 6), (6, 7)], "addmv": [(5,), (5, 6), (6,)],
              "baddbmm": [(3, 5, 7), (3, 5, 6), (3, 6, 7)], "addbmm": [(5, 7), (3, 5, 6), (3, 6, 7)],
              "addr": [(5, 7), (5,), (7,)]}[op]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    mine = [tl.tensor(a).to(getattr(tl, dtype)).requires_grad_() for a in arrays]
    theirs = [torch.tensor(a).to(getattr(torch, dtype)) for a in arrays]
    got = getattr(tl, op)(*mine, beta=-4.775, alpha=2.0315)
    want = getattr(torch, op)(*theirs, beta=-4.775, alpha=2.0315)
    assert got.dtype == getattr(tl, dtype)
    if op in ("addmm", "baddbmm"):      # PyTorch's GEMM epilogue: one rounding, bit for bit
        np.testing.assert_array_equal(got.detach().float().numpy(), want.float().numpy())
    else:                               # PyTorch rounds these in other places: within an ulp
        tol = 2 ** -7 if dtype == "bfloat16" else 2 ** -10
        np.testing.assert_allclose(got.detach().float().numpy(), want.float().numpy(),
                                   rtol=2 * tol, atol=2 * tol)
    got.float().sum().backward()
    assert all(t.grad is not None and t.grad.dtype == t.dtype for t in mine)
