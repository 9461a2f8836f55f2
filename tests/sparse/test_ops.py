"""Sparse products and reductions against torch, values and gradients: torch.mm/spmm/matmul/
@/addmm/mv with a sparse operand (a sparse leaf gets a dense gradient there, as in PyTorch),
torch.sparse.mm/addmm (a sparse gradient on the coalesced entries), dense @ sparse,
sparse @ sparse, torch.sparse.sum and softmax/log_softmax, gradients reaching the values a
sparse tensor was built from, and PyTorch's errors."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")

RNG = np.random.default_rng(5)
IDX = np.array([[0, 1, 1, 0, 3, 2], [2, 0, 2, 2, 1, 3]])       # (0, 2) twice
VAL = RNG.standard_normal(6).astype(np.float32)
DENSE = RNG.standard_normal((4, 3)).astype(np.float32)
WEIGHT = RNG.standard_normal((4, 3)).astype(np.float32)       # what the output is dotted with
SQUARE = RNG.standard_normal((4, 4)).astype(np.float32)


def _sparse(lib, device=None, leaf=False, values=None):
    kwargs = {"device": device} if device else {}
    if values is None or isinstance(values, np.ndarray):
        values = lib.tensor(VAL if values is None else values, **kwargs)
    return lib.sparse_coo_tensor(lib.tensor(IDX, **kwargs), values, (4, 4), requires_grad=leaf)


def _np(t):
    dense = t if t.layout in (tl.strided, torch.strided) else t.to_dense()
    return dense.detach().cpu().numpy()


def _close(ours, theirs):
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-4, atol=1e-5)


def _dense(lib, device=None, array=DENSE):
    kwargs = {"device": device} if device else {}
    return lib.tensor(array, requires_grad=True, **kwargs)


PRODUCTS = {
    "mm": lambda m, s, d: m.mm(s, d),
    "spmm": lambda m, s, d: m.spmm(s, d),
    "matmul": lambda m, s, d: m.matmul(s, d),
    "at": lambda m, s, d: s @ d,
    "method": lambda m, s, d: s.mm(d),
    "addmm": lambda m, s, d: m.addmm(d[:, :1] * 0 + 1, s, d, beta=0.5, alpha=2.0),
    "sparse.mm": lambda m, s, d: m.sparse.mm(s, d),
    "sparse.addmm": lambda m, s, d: m.sparse.addmm(d[:, :1] * 0 + 1, s, d, beta=0.5,
                                                   alpha=2.0),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_sparse_dense_products_and_gradients(name, device):
    product = PRODUCTS[name]
    results = []
    for lib, dev in ((tl, device), (torch, None)):
        s, d = _sparse(lib, dev, leaf=True), _dense(lib, dev)
        out = product(lib, s, d)
        (out * lib.tensor(WEIGHT, **({"device": dev} if dev else {}))).sum().backward()
        results.append((out, s.grad, d.grad))
    (out, gs, gd), (t_out, t_gs, t_gd) = results
    _close(out, t_out)
    _close(gd, t_gd)
    assert gs.layout is getattr(tl, str(t_gs.layout).split(".")[-1])   # sparse or dense
    _close(gs, t_gs)
    if gs.is_sparse:
        assert gs._nnz() == t_gs.coalesce()._nnz()


def test_gradient_reaches_the_values(device):
    """A sparse tensor built from values that require grad: the values' gradient, each
    duplicate of a position getting that position's (torch's)."""
    for product in ("mm", "sparse.mm"):
        grads = []
        for lib, dev in ((tl, device), (torch, None)):
            kwargs = {"device": dev} if dev else {}
            v = lib.tensor(VAL, requires_grad=True, **kwargs)
            s = _sparse(lib, dev, values=v)
            assert s.requires_grad and s.grad_fn is not None and not s.is_leaf
            out = PRODUCTS[product](lib, s, _dense(lib, dev))
            (out * lib.tensor(WEIGHT, **kwargs)).sum().backward()
            grads.append(v.grad)
        _close(*grads)


def test_mv_and_vector_matmul(device):
    v = RNG.standard_normal(4).astype(np.float32)
    s, t = _sparse(tl, device), _sparse(torch)
    _close(tl.mv(s, tl.tensor(v, device=device)), torch.mv(t, torch.tensor(v)))
    _close(s @ tl.tensor(v, device=device), t @ torch.tensor(v))


def test_dense_at_sparse(device):
    a = RNG.standard_normal((2, 4)).astype(np.float32)
    outs = []
    for lib, dev in ((tl, device), (torch, None)):
        d = _dense(lib, dev, a)
        out = d @ _sparse(lib, dev)
        out.sum().backward()
        outs.append((out, d.grad))
    _close(outs[0][0], outs[1][0])
    _close(outs[0][1], outs[1][1])
    _close(tl.matmul(tl.tensor(a, device=device), _sparse(tl, device)),
           torch.tensor(a) @ _sparse(torch))


def test_sparse_at_sparse(device):
    ours = _sparse(tl, device) @ _sparse(tl, device).t()
    theirs = _sparse(torch) @ _sparse(torch).t()
    assert ours.is_sparse and ours.is_coalesced()
    _close(ours, theirs)
    _close(tl.sparse.mm(_sparse(tl, device), _sparse(tl, device)),
           torch.sparse.mm(_sparse(torch), _sparse(torch)))


def test_integer_and_double_products():
    for np_dtype in (np.int64, np.float64):
        vals = (VAL * 10).astype(np_dtype)
        d = (DENSE * 10).astype(np_dtype)
        ours = tl.mm(_sparse(tl, values=vals), tl.tensor(d))
        theirs = torch.mm(_sparse(torch, values=vals), torch.tensor(d))
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        _close(ours, theirs)


@pytest.mark.parametrize("call", [
    lambda m, s: m.mm(s, m.ones(3, 2)),
    lambda m, s: m.sparse.mm(s, m.ones(3, 2)),
    lambda m, s: m.mm(s, m.ones(4, 2, dtype=m.float64)),
])
def test_product_errors(call):
    with pytest.raises(RuntimeError) as theirs:
        call(torch, _sparse(torch))
    with pytest.raises(RuntimeError) as ours:
        call(tl, _sparse(tl))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_sum(dim, device):
    outs = []
    for lib, dev in ((tl, device), (torch, None)):
        s = _sparse(lib, dev, leaf=True)
        out = lib.sparse.sum(s) if dim is None else lib.sparse.sum(s, dim)
        dense_out = out.to_dense() if out.is_sparse else out
        w = lib.arange(dense_out.numel(), dtype=lib.float32, **(
            {"device": dev} if dev else {})).reshape(dense_out.shape)
        (dense_out * w).sum().backward()
        outs.append((out, s.grad))
    (out, g), (t_out, t_g) = outs
    assert out.is_sparse == t_out.is_sparse
    _close(out, t_out)
    assert g.is_sparse and t_g.is_sparse
    _close(g, t_g)


def test_sum_hybrid_and_method():
    vals = RNG.standard_normal((6, 2)).astype(np.float32)
    for dim in (0, 2, (1, 2), (0, 1)):
        s = tl.sparse_coo_tensor(tl.tensor(IDX), tl.tensor(vals), (4, 4, 2))
        t = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(vals), (4, 4, 2))
        _close(tl.sparse.sum(s, dim), torch.sparse.sum(t, dim))
    _close(_sparse(tl).sum(1), _sparse(torch).sum(1))
    _close(_sparse(tl).sum(), _sparse(torch).sum())


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax(dim, log, device):
    outs = []
    for lib, dev in ((tl, device), (torch, None)):
        s = _sparse(lib, dev, leaf=True)
        fn = lib.sparse.log_softmax if log else lib.sparse.softmax
        # torch's backward for a negative dim is not that of the dim it names (its gradient
        # rows do not sum to 0); compare with the dim it names
        out = fn(s, dim if lib is tl else dim % 2)
        w = lib.tensor(SQUARE, **({"device": dev} if dev else {}))
        (out.to_dense() * w).sum().backward()
        outs.append((out, s.grad))
    (out, g), (t_out, t_g) = outs
    assert out.is_sparse and out.is_coalesced()
    np.testing.assert_array_equal(out.indices().cpu().numpy(), t_out.indices().numpy())
    _close(out.values(), t_out.values())
    _close(g, t_g)


def test_softmax_gradient_to_values():
    grads = []
    for lib in (tl, torch):
        v = lib.tensor(VAL, requires_grad=True)
        out = lib.sparse.softmax(_sparse(lib, values=v), 1)
        (out.to_dense() * lib.tensor(SQUARE)).sum().backward()
        grads.append(v.grad)
    _close(*grads)


def test_autograd_through_structure_ops():
    """to_dense, coalesce, values(), transposes, scaling and adding: a sparse leaf's
    gradient as torch's (sparse, on its coalesced entries)."""
    ops = [lambda s: s.to_dense(), lambda s: s.coalesce().to_dense(),
           lambda s: s.coalesce().values() * 2, lambda s: s.t().to_dense(),
           lambda s: (s * 3 - s / 2).to_dense(), lambda s: (-s + s).to_dense()]
    for op in ops:
        grads = []
        for lib in (tl, torch):
            s = _sparse(lib, leaf=True)
            out = op(s)
            w = lib.arange(out.numel(), dtype=lib.float32).reshape(out.shape)
            (out * w).sum().backward()
            grads.append(s.grad)
        assert grads[0].is_sparse and grads[1].is_sparse
        _close(*grads)


def test_dense_to_sparse_gradient():
    grads = []
    for lib in (tl, torch):
        d = lib.tensor([[0.0, 1.0], [2.0, 0.0]], requires_grad=True)
        lib.sparse.mm(d.to_sparse(), lib.ones(2, 2)).sum().backward()
        grads.append(d.grad)
    _close(*grads)


def test_leaf_gradient_accumulates(device):
    grads = []
    for lib, dev in ((tl, device), (torch, None)):
        s = _sparse(lib, dev, leaf=True)
        for _ in range(2):
            lib.sparse.mm(s, _dense(lib, dev)).sum().backward()
        grads.append(s.grad)
    assert grads[0].is_sparse
    _close(*grads)


def test_module_buffer_moves_and_casts(device):
    module = tl.nn.Module()
    module.register_buffer("adj", _sparse(tl))
    module.to(device).double()
    assert module.adj.is_sparse and module.adj.dtype is tl.float64
    assert module.adj.device == tl.ones(1, device=device).device
    _close(module.adj, _sparse(torch).double())


@pytest.mark.parametrize("name", ["abs", "sqrt", "tanh", "relu", "sin", "square", "expm1",
                                  "floor", "pow"])
def test_zero_preserving_unary(name):
    """On the coalesced values (duplicates summed first). The gradient is the dense
    function's on the coalesced values (torch's sparse backward lacks most of these)."""
    values = np.abs(VAL) + 0.5 if name == "sqrt" else VAL
    apply = (lambda x: x.pow(3)) if name == "pow" else (lambda x: getattr(x, name)())
    s = _sparse(tl, values=values, leaf=True)
    out = apply(s)
    assert out.is_sparse and out.is_coalesced()
    (out.to_dense() * tl.tensor(SQUARE)).sum().backward()
    t = _sparse(torch, values=values).coalesce()
    _close(out, apply(t))
    v = t.values().clone().requires_grad_(True)
    idx = t.indices()
    (apply(v) * torch.tensor(SQUARE)[idx[0], idx[1]]).sum().backward()
    expected = torch.sparse_coo_tensor(idx, v.grad, t.shape)
    assert s.grad.is_sparse
    _close(s.grad, expected)


_REDUCE_DENSE = [[0.0, 1.0, 1.0, 0.0], [2.0, 0.0, 4.0, 0.0], [0.0, 0.0, 0.0, 0.0],
                 [0.0, -1.0, 0.0, 3.0]]
_REDUCE_RHS = [[1.0, -2.0], [3.0, 4.0], [3.0, -6.0], [0.5, 2.0]]    # a tie in row 0


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
@pytest.mark.parametrize("reduce", ["mean", "amax", "amin", "max", "min"])
def test_sparse_mm_row_reductions_match_torch(reduce):
    """torch.sparse.mm(csr, dense, reduce) (PyG's spmm): values, empty rows, and the
    gradient (amax/amin: to the first extreme entry only)."""
    weights = np.arange(1.0, 9.0, dtype=np.float32).reshape(4, 2)
    grads = []
    for lib in (tl, torch):
        a = lib.tensor(_REDUCE_DENSE).to_sparse_csr()
        d = lib.tensor(_REDUCE_RHS, requires_grad=True)
        out = lib.sparse.mm(a, d, reduce)
        (out * lib.tensor(weights)).sum().backward()
        grads.append((out.detach().numpy(), d.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-6)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-6)


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta",
                            "ignore:Sparse CSC tensor support is in beta")
def test_sparse_mm_reduce_errors_match_torch():
    for lib in (tl, torch):
        csr = lib.tensor(_REDUCE_DENSE).to_sparse_csr()
        with pytest.raises(RuntimeError, match="prod has not been enabled"):
            lib.sparse.mm(csr, lib.ones(4, 2), "prod")
        with pytest.raises(RuntimeError, match="must be either sum, prod, mean, amax or amin, "
                                               "got foo"):
            lib.sparse.mm(csr, lib.ones(4, 2), "foo")
        with pytest.raises(RuntimeError, match=r"tensor.size\[0\] == 4 but got: dimension 2 "
                                               r"and tensor.size\[0\] = 2"):
            lib.sparse.mm(csr, lib.ones(2, 2), "mean")
        with pytest.raises(RuntimeError, match="to have scalar type Float"):
            lib.sparse.mm(csr, lib.ones(4, 2, dtype=lib.float64), "mean")
        with pytest.raises(RuntimeError, match="expect self to be SparseCsr, got SparseCsc"):
            lib.sparse.mm(lib.tensor(_REDUCE_DENSE).to_sparse_csc(), lib.ones(4, 2), "amax")
        with pytest.raises(NotImplementedError, match="_sparse_mm_reduce_impl"):
            lib.sparse.mm(lib.tensor(_REDUCE_DENSE).to_sparse(), lib.ones(4, 2), "mean")
