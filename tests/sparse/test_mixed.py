"""A sparse COO tensor meeting dense tensors and dense-named ops, against torch: zeros_like /
empty_like, dense add/sub (method, in place, operator, namespace, out=) with a sparse operand,
dense.sparse_mask(sparse), sparse * sparse, sparse.add_(sparse), the legacy sparse.new and
resize_as_ (what the sparse branches of SM3, MADGRAD and DAdaptAdaGrad call), with gradients
and PyTorch's errors."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")

RNG = np.random.default_rng(11)
IDX = np.array([[1, 0, 1, 3], [2, 1, 2, 0]])            # (1, 2) twice: uncoalesced
VAL = RNG.standard_normal(4).astype(np.float32)
HYBRID_VAL = RNG.standard_normal((4, 2)).astype(np.float32)
DENSE = RNG.standard_normal((4, 3)).astype(np.float32)


def _sparse(lib, values=VAL, indices=IDX, size=None, dtype=None, coalesce=False):
    size = size or ((4, 3) + values.shape[1:])
    s = lib.sparse_coo_tensor(lib.tensor(indices), lib.tensor(values, dtype=dtype), size)
    return s.coalesce() if coalesce else s


def _np(t):
    dense = t.to_dense() if t.is_sparse else t
    return dense.detach().cpu().numpy()


def _same_sparse(ours, theirs, exact_entries=True):
    """Same layout facts; the same entries in the same order when `exact_entries`."""
    assert ours.is_sparse and theirs.is_sparse
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert (ours.sparse_dim(), ours.dense_dim()) == (theirs.sparse_dim(), theirs.dense_dim())
    assert ours.is_coalesced() == theirs.is_coalesced()
    if exact_entries:
        assert ours._nnz() == theirs._nnz()
        np.testing.assert_array_equal(ours._indices().numpy(), theirs._indices().numpy())
        np.testing.assert_allclose(ours._values().detach().numpy(),
                                   theirs._values().detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-6, atol=1e-6)


# ---- zeros_like / empty_like -----------------------------------------------------------------
@pytest.mark.parametrize("fn", ["zeros_like", "empty_like"])
@pytest.mark.parametrize("values", [VAL, HYBRID_VAL], ids=["plain", "hybrid"])
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_like_of_sparse_is_an_empty_sparse_tensor(fn, values, dtype):
    outs = []
    for lib in (tl, torch):
        kwargs = {"dtype": getattr(lib, dtype)} if dtype else {}
        outs.append(getattr(lib, fn)(_sparse(lib, values), **kwargs))
    _same_sparse(*outs)
    assert outs[0]._indices().shape == tuple(outs[1]._indices().shape)
    assert outs[0]._values().shape == tuple(outs[1]._values().shape)


def test_zeros_like_requires_grad_and_fills_refused():
    z = tl.zeros_like(_sparse(tl), requires_grad=True)
    assert z.requires_grad and z.is_sparse
    for lib in (tl, torch):
        with pytest.raises(NotImplementedError, match="fill_"):
            lib.ones_like(_sparse(lib))
        with pytest.raises(NotImplementedError, match="fill_"):
            lib.full_like(_sparse(lib), 2.0)


# ---- dense + sparse --------------------------------------------------------------------------
ADDS = {
    "add": lambda lib, d, s: d.add(s),
    "add_alpha": lambda lib, d, s: d.add(s, alpha=-2.5),
    "sub": lambda lib, d, s: d.sub(s, alpha=3),
    "plus": lambda lib, d, s: d + s,
    "minus": lambda lib, d, s: d - s,
    "torch.add": lambda lib, d, s: lib.add(d, s, alpha=0.5),
    "torch.sub": lambda lib, d, s: lib.sub(d, s),
    "add_": lambda lib, d, s: d.clone().add_(s, alpha=0.25),
    "sub_": lambda lib, d, s: d.clone().sub_(s),
    "out": lambda lib, d, s: lib.add(d, s, out=lib.empty(d.shape, dtype=d.dtype)),
}


@pytest.mark.parametrize("name", sorted(ADDS))
@pytest.mark.parametrize("values", [VAL, HYBRID_VAL], ids=["plain", "hybrid"])
def test_dense_plus_sparse(name, values):
    dense = RNG.standard_normal((4, 3) + values.shape[1:]).astype(np.float32)
    ours = ADDS[name](tl, tl.tensor(dense), _sparse(tl, values))
    theirs = ADDS[name](torch, torch.tensor(dense), _sparse(torch, values))
    assert ours.layout == tl.strided and ours.dtype == tl.float32
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-6, atol=1e-6)


def test_dense_add_sparse_in_place_writes_a_transposed_dense_tensor():
    results = []
    for lib in (tl, torch):
        base = lib.tensor(DENSE.T.copy())
        target = base.t()                                     # (4, 3), not contiguous
        out = target.add_(_sparse(lib), alpha=2)
        assert out is target
        results.append(base)
    np.testing.assert_allclose(_np(results[0]), _np(results[1]), rtol=1e-6)


def test_dense_add_sparse_large():
    n = 300_000
    idx = RNG.integers(0, n, (1, 70_000))                     # many duplicates
    val = RNG.standard_normal(70_000)
    dense = RNG.standard_normal(n)
    ours = tl.tensor(dense).add_(tl.sparse_coo_tensor(tl.tensor(idx), tl.tensor(val), (n,)),
                                 alpha=-0.5)
    theirs = torch.tensor(dense).add_(torch.sparse_coo_tensor(torch.tensor(idx),
                                                              torch.tensor(val), (n,)),
                                      alpha=-0.5)
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dense_dtype,sparse_dtype", [
    ("float32", "float64"), ("float64", "float32"), ("int64", "float32"), ("float32", "int64"),
    ("int32", "int64")])
def test_dense_plus_sparse_promotes(dense_dtype, sparse_dtype):
    outs = []
    for lib in (tl, torch):
        d = lib.tensor(DENSE * 4).to(getattr(lib, dense_dtype))
        s = _sparse(lib, VAL * 4).to(getattr(lib, sparse_dtype))
        outs.append(d.add(s))
    assert str(outs[0].dtype).split(".")[-1] == str(outs[1].dtype).split(".")[-1]
    np.testing.assert_allclose(_np(outs[0]), _np(outs[1]), rtol=1e-6)


ADD_ERRORS = {
    "size": lambda lib: lib.ones(3, 4).add(_sparse(lib)),
    "broadcast": lambda lib: lib.ones(2, 4, 3).add_(_sparse(lib)),
    "in_place_int": lambda lib: lib.ones(4, 3, dtype=lib.int64).add_(_sparse(lib)),
    "bool_alpha": lambda lib: lib.ones(4, 3).add(_sparse(lib), alpha=True),
    "float_alpha_int": lambda lib: lib.ones(4, 3, dtype=lib.int64).add(
        _sparse(lib, dtype=lib.int64), alpha=0.5),
    "sparse_plus_dense": lambda lib: lib.add(_sparse(lib), lib.ones(4, 3)),
    "sparse_minus_dense": lambda lib: _sparse(lib) - lib.ones(4, 3),
}


@pytest.mark.parametrize("name", sorted(ADD_ERRORS))
def test_dense_plus_sparse_errors(name):
    with pytest.raises(RuntimeError) as theirs:
        ADD_ERRORS[name](torch)
    with pytest.raises(RuntimeError) as ours:
        ADD_ERRORS[name](tl)
    first_words = " ".join(str(theirs.value).split()[:4])
    assert first_words in str(ours.value)


def test_dense_plus_sparse_gradients_are_dense():
    grads = []
    weight = RNG.standard_normal((4, 3)).astype(np.float32)
    for lib in (tl, torch):
        d = lib.tensor(DENSE, requires_grad=True)
        s = _sparse(lib).detach().requires_grad_(True)
        (lib.add(d, s, alpha=-1.5) * lib.tensor(weight)).sum().backward()
        assert s.grad.layout == lib.strided
        grads.append((d.grad, s.grad))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-6)


def test_dense_add_sparse_in_place_records_the_dense_gradient():
    grads = []
    for lib in (tl, torch):
        d = lib.tensor(DENSE, requires_grad=True)
        x = d * 2
        x.add_(_sparse(lib), alpha=3)
        (x * x).sum().backward()
        grads.append(d.grad)
    np.testing.assert_allclose(_np(grads[0]), _np(grads[1]), rtol=1e-5)


# ---- sparse_mask -------------------------------------------------------------------------------
@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("values", [VAL, HYBRID_VAL], ids=["plain", "hybrid"])
def test_sparse_mask(coalesce, values):
    dense = RNG.standard_normal((4, 3) + values.shape[1:])
    ours = tl.tensor(dense).sparse_mask(_sparse(tl, values, coalesce=coalesce))
    theirs = torch.tensor(dense).sparse_mask(_sparse(torch, values, coalesce=coalesce))
    _same_sparse(ours, theirs)


def test_sparse_mask_gradient_and_errors():
    grads = []
    for lib in (tl, torch):
        d = lib.tensor(DENSE, requires_grad=True)
        masked = d.sparse_mask(_sparse(lib))
        (masked.to_dense() * 3).sum().backward()
        grads.append(d.grad)
    np.testing.assert_allclose(_np(grads[0]), _np(grads[1]))
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match="incompatible sizes"):
            lib.ones(3, 3).sparse_mask(_sparse(lib))
        with pytest.raises(RuntimeError, match="mask"):
            lib.ones(4, 3).sparse_mask(lib.ones(4, 3))


# ---- sparse * sparse and sparse.add_(sparse) -----------------------------------------------
OTHER_IDX = np.array([[1, 3, 0, 2, 1], [2, 0, 0, 1, 2]])  # (1, 2) twice; (0, 0), (2, 1) only here
OTHER_VAL = RNG.standard_normal(5).astype(np.float32)


@pytest.mark.parametrize("coalesce_a", [False, True])
@pytest.mark.parametrize("coalesce_b", [False, True])
@pytest.mark.parametrize("swap", [False, True])
def test_sparse_times_sparse(coalesce_a, coalesce_b, swap):
    outs = []
    for lib in (tl, torch):
        a = _sparse(lib, coalesce=coalesce_a)
        b = _sparse(lib, OTHER_VAL, OTHER_IDX, coalesce=coalesce_b)
        outs.append(b * a if swap else a * b)
    _same_sparse(*outs)


@pytest.mark.parametrize("values", [VAL, HYBRID_VAL], ids=["plain", "hybrid"])
def test_sparse_square_and_empty_operand(values):
    _same_sparse(*(_sparse(lib, values, coalesce=True) * _sparse(lib, values, coalesce=True)
                   for lib in (tl, torch)))
    _same_sparse(*(_sparse(lib, values) * _sparse(lib, values) for lib in (tl, torch)))
    _same_sparse(*(_sparse(lib, values) * lib.zeros_like(_sparse(lib, values))
                   for lib in (tl, torch)))


def test_sparse_times_sparse_promotes():
    _same_sparse(*(_sparse(lib, coalesce=True) * _sparse(lib, coalesce=True).double()
                   for lib in (tl, torch)))


@pytest.mark.parametrize("coalesce", [False, True])
def test_sparse_add_in_place(coalesce):
    outs = []
    for lib in (tl, torch):
        a = _sparse(lib, coalesce=coalesce)
        b = _sparse(lib, OTHER_VAL, OTHER_IDX, coalesce=coalesce)
        out = a.add_(b, alpha=2)
        assert out is a
        outs.append(a)
    # uncoalesced, PyTorch merges the two lists of entries as if sorted; tensorlib concatenates
    # them: the same tensor and coalesced flag, other entries
    _same_sparse(*outs, exact_entries=coalesce)


def test_sparse_add_in_place_updates_shared_values():
    """MADGRAD's pattern: the coalesced sum's values are the tensor's own afterwards."""
    for lib in (tl, torch):
        a = _sparse(lib, coalesce=True)
        a.add_(a * a, alpha=0.5)
        a._values().add_(1.0)
    ours, theirs = (_sparse(lib, coalesce=True) for lib in (tl, torch))
    for x in (ours, theirs):
        x.add_(x * x, alpha=0.5)
        x._values().add_(1.0)
    _same_sparse(ours, theirs)


def test_sparse_add_in_place_errors():
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match="add\\(sparse, dense\\)"):
            _sparse(lib).add_(lib.ones(4, 3))


# ---- the legacy new and resize_as_ --------------------------------------------------------------
def test_new_and_resize_as():
    for make in (lambda s: s.new(), lambda s: s.new().resize_as_(s),
                 lambda s: s.new(s._indices(), s._values() * 2, s.size()),
                 lambda s: s.new(s._indices(), s._values().double()),
                 lambda s: s.new(2, 3), lambda s: s.new(s.size()),
                 lambda s: s.new().resize_as_(s.to_dense().to_sparse(1))):
        _same_sparse(*(make(_sparse(lib)) for lib in (tl, torch)))
    ours = _sparse(tl).new()
    assert tuple(ours._indices().shape) == (1, 0) and tuple(ours._values().shape) == (0,)


def test_resize_as_keeps_entries_and_refuses_shrinking():
    grown = []
    for lib in (tl, torch):
        s = _sparse(lib, HYBRID_VAL)
        grown.append(s.resize_as_(lib.zeros(6, 5, 2).to_sparse(2)))
    _same_sparse(*grown)
    wider = _sparse(tl, HYBRID_VAL).resize_as_(tl.zeros(4, 3, 3).to_sparse(2))
    assert tuple(wider._values().shape) == (4, 3)      # the old values first, row-major
    np.testing.assert_array_equal(wider._values().reshape(-1)[:8].numpy(), HYBRID_VAL.ravel())
    for target in (lambda lib: lib.zeros(2, 3).to_sparse(),
                   lambda lib: lib.zeros(4, 3).to_sparse(1),
                   lambda lib: lib.zeros(4, 3, 1).to_sparse(2)):
        messages = []
        for lib in (torch, tl):
            with pytest.raises(RuntimeError) as error:
                _sparse(lib, HYBRID_VAL).resize_as_(target(lib))
            messages.append(str(error.value).split("\n")[0])
        assert messages[0] == messages[1]


def test_new_errors():
    for call in (lambda s: s.new([1.0, 2.0]), lambda s: s.new(s._values()),
                 lambda s: s.new((2, 3))):
        for lib in (tl, torch):
            with pytest.raises(TypeError):
                call(_sparse(lib))


def test_sm3_make_sparse_pattern():
    """SM3's make_sparse and its reduce over the dense result, as the optimizer runs them."""
    results = []
    for lib in (tl, torch):
        grad = _sparse(lib).coalesce()
        acc = lib.ones(4)
        update = lib.gather(acc, 0, grad._indices()[0]).addcmul_(grad._values(),
                                                                 grad._values(), value=0.1)
        results.append(grad.new(grad._indices(), update, grad.size()).to_dense().amax(1))
        assert lib.zeros_like(grad).is_sparse
    np.testing.assert_allclose(_np(results[0]), _np(results[1]), rtol=1e-6)


# ---- in place on a sparse tensor's values, `dense += sparse` ---------------------------------
IN_PLACE = {
    "neg_": lambda s: s.neg_(),
    "zero_": lambda s: s.zero_(),
    "mul_": lambda s: s.mul_(2.5),
    "div_": lambda s: s.div_(4),
    "imul": lambda s: s.__imul__(3.0),
    "detach_": lambda s: s.detach_(),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("values", [VAL, HYBRID_VAL], ids=["plain", "hybrid"])
def test_sparse_in_place_on_values(name, coalesce, values):
    outs = []
    for lib in (tl, torch):
        s = _sparse(lib, values, coalesce=coalesce)
        assert IN_PLACE[name](s) is s
        outs.append(s)
    _same_sparse(*outs)


def test_sparse_in_place_refuses_a_recorded_leaf():
    s = _sparse(tl).requires_grad_(True)
    with pytest.raises(NotImplementedError):
        s.neg_()
    with tl.no_grad():
        s.neg_()                                           # what optimizers do: no graph
    np.testing.assert_allclose(_np(s), -_np(_sparse(tl)))


@pytest.mark.parametrize("values", [VAL, HYBRID_VAL], ids=["plain", "hybrid"])
def test_dense_augmented_assignment_with_sparse(values):
    outs = []
    for lib in (tl, torch):
        d = lib.ones((4, 3) + values.shape[1:])
        d += _sparse(lib, values)
        d -= _sparse(lib, values) * 3
        outs.append(d)
    np.testing.assert_allclose(_np(outs[0]), _np(outs[1]), rtol=1e-6)


def test_dense_add_wider_sparse_in_place_rounds_once():
    """float32 += float64 sparse: summed in float64 and rounded once, as PyTorch does."""
    idx = np.zeros((1, 1000), np.int64)                      # one position, 1000 times
    val = np.full(1000, 1e-8)
    outs = []
    for lib in (tl, torch):
        d = lib.ones(2)
        d.add_(lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(val), (2,)))
        outs.append(d)
    np.testing.assert_array_equal(_np(outs[0]), _np(outs[1]))
    assert _np(outs[0])[0] != 1.0


def test_the_older_sparse_dense_product_names():
    i, v = [[0, 1, 1], [1, 0, 2]], [1.0, 2.0, -3.0]
    dense = np.arange(12, dtype=np.float32).reshape(3, 4)
    mine = tl.sparse_coo_tensor(tl.tensor(i), tl.tensor(v), (2, 3))
    theirs = torch.sparse_coo_tensor(torch.tensor(i), torch.tensor(v), (2, 3))
    want = torch.dsmm(theirs, torch.tensor(dense)).numpy()
    np.testing.assert_allclose(tl.dsmm(mine, tl.tensor(dense)).numpy(), want)
    for name in ("hsmm", "smm"):
        got = getattr(tl, name)(mine, tl.tensor(dense))
        assert got.layout == tl.sparse_coo
        np.testing.assert_allclose(got.to_dense().numpy(), want)
    with pytest.raises(RuntimeError, match="expected a sparse first argument"):
        tl.dsmm(tl.ones(2, 3), tl.tensor(dense))
