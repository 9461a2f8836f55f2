"""Sparse CSC matrices (torch.sparse_csc) against PyTorch: construction, the three arrays,
conversions to and from every layout, the transpose (a CSR tensor), products, printing,
and the layout errors of the accessors."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSC tensor support is in beta",
                                        "ignore:Sparse CSR tensor support is in beta",
                                        "ignore:Sparse invariant checks")

DENSE = [[0.0, 1.0, 3.0], [2.0, 0.0, 4.0]]


def _arrays(t):
    return [a.tolist() for a in (t.ccol_indices(), t.row_indices(), t.values())]


def test_from_dense_coo_and_csr_as_torch():
    for make in (lambda lib: lib.tensor(DENSE).to_sparse_csc(),
                 lambda lib: lib.tensor(DENSE).to_sparse().to_sparse_csc(),
                 lambda lib: lib.tensor(DENSE).to_sparse_csr().to_sparse_csc(),
                 lambda lib: lib.tensor(DENSE).to_sparse(layout=lib.sparse_csc)):
        ours, theirs = make(tl), make(torch)
        assert ours.layout is tl.sparse_csc and theirs.layout is torch.sparse_csc
        assert _arrays(ours) == _arrays(theirs) and ours.shape == tuple(theirs.shape)
        assert ours._nnz() == theirs._nnz()
        assert (ours.is_sparse, ours.is_sparse_csr) == (theirs.is_sparse, theirs.is_sparse_csr)


def test_constructor_and_default_size():
    ours = tl.sparse_csc_tensor([0, 1, 2, 4], [1, 0, 0, 1], [2.0, 1.0, 3.0, 4.0], (2, 3))
    theirs = torch.sparse_csc_tensor([0, 1, 2, 4], [1, 0, 0, 1], [2.0, 1.0, 3.0, 4.0], (2, 3))
    np.testing.assert_array_equal(ours.to_dense().numpy(), theirs.to_dense().numpy())
    assert tl.sparse_csc_tensor([0, 1, 2], [0, 3], [1.0, 2.0]).shape == \
        tuple(torch.sparse_csc_tensor([0, 1, 2], [0, 3], [1.0, 2.0]).shape) == (4, 2)


def test_conversions_out_as_torch():
    ours, theirs = tl.tensor(DENSE).to_sparse_csc(), torch.tensor(DENSE).to_sparse_csc()
    np.testing.assert_array_equal(ours.to_dense().numpy(), theirs.to_dense().numpy())
    assert ours.to_dense().is_contiguous()
    coo, coo_t = ours.to_sparse(), theirs.to_sparse()
    assert coo._indices().tolist() == coo_t._indices().tolist()
    assert coo._values().tolist() == coo_t._values().tolist()
    assert coo.is_coalesced() == coo_t.is_coalesced()
    csr, csr_t = ours.to_sparse_csr(), theirs.to_sparse_csr()
    assert [csr.crow_indices().tolist(), csr.col_indices().tolist(), csr.values().tolist()] == \
        [csr_t.crow_indices().tolist(), csr_t.col_indices().tolist(), csr_t.values().tolist()]
    assert ours.to_sparse_csc() is ours
    assert ours.double().dtype == tl.float64 and ours.double().layout is tl.sparse_csc


def test_transpose_is_the_csr_of_the_same_arrays():
    ours, theirs = tl.tensor(DENSE).to_sparse_csc(), torch.tensor(DENSE).to_sparse_csc()
    for a, b in ((ours.t(), theirs.t()), (ours.transpose(0, 1), theirs.transpose(0, 1))):
        assert a.layout is tl.sparse_csr and b.layout is torch.sparse_csr
        assert a.shape == tuple(b.shape)
        assert a.crow_indices().tolist() == b.crow_indices().tolist()
        assert a.col_indices().tolist() == b.col_indices().tolist()


def test_products_as_torch():
    ours, theirs = tl.tensor(DENSE).to_sparse_csc(), torch.tensor(DENSE).to_sparse_csc()
    rhs = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    lhs = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    np.testing.assert_allclose((ours @ tl.tensor(rhs)).numpy(),
                               (theirs @ torch.tensor(rhs)).numpy())
    np.testing.assert_allclose((tl.tensor(lhs) @ ours).numpy(),
                               (torch.tensor(lhs) @ theirs).numpy())
    np.testing.assert_allclose(tl.sparse.mm(ours, tl.tensor(rhs)).numpy(),
                               torch.sparse.mm(theirs, torch.tensor(rhs)).numpy())


def test_repr_as_torch():
    ours = repr(tl.tensor(DENSE).to_sparse_csc()).replace("tensorlib.", "torch.")
    assert ours.splitlines()[:3] == repr(torch.tensor(DENSE).to_sparse_csc()).splitlines()[:3]


@pytest.mark.parametrize("call", ["stride()", "is_contiguous()", "crow_indices()", "indices()",
                                  "coalesce()", "type()"])
def test_errors_on_csc_as_torch(call):
    messages = []
    for lib in (tl, torch):
        with pytest.raises(RuntimeError) as info:
            eval(f"t.{call}", {"t": lib.tensor(DENSE).to_sparse_csc()})
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("make", ["ones(2, 2)", "ones(2, 2).to_sparse()",
                                  "ones(2, 2).to_sparse_csr()"])
@pytest.mark.parametrize("accessor", ["ccol_indices", "row_indices"])
def test_column_accessors_refused_on_other_layouts(make, accessor):
    messages = []
    for lib in (tl, torch):
        with pytest.raises(RuntimeError) as info:
            getattr(eval(f"lib.{make}", {"lib": lib}), accessor)()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_invariants_checked_with_csc_names():
    with pytest.raises(RuntimeError, match=r"ccol_indices.shape\[-1\] must be equal to the "
                                           r"number of columns \+ 1 \(=3\), but got 2"):
        tl.sparse_csc_tensor([0, 1], [0], [1.0], (2, 2))
    with pytest.raises(RuntimeError, match="`0 <= row_indices < nrows` is not satisfied."):
        tl.sparse_csc_tensor([0, 1, 1], [5], [1.0], (2, 2))
    with pytest.raises(NotImplementedError, match="sparse CSC"):
        tl.sparse_csc_tensor([0, 1, 1], [0], [1.0], (2, 2), requires_grad=True)


def _hybrid(lib):
    indices = lib.tensor([[0, 1, 1], [1, 0, 2]])
    return lib.sparse_coo_tensor(indices, lib.arange(6.0).view(3, 2), (3, 3, 2))


@pytest.mark.parametrize("convert", [
    lambda t: t.to_sparse_csr(), lambda t: t.to_sparse_csc(),
    lambda t: t.to_sparse_csc().to_sparse_csr(), lambda t: t.to_sparse_csr().to_sparse_csc(),
    lambda t: t.to_dense().to_sparse_csr(dense_dim=1),
    lambda t: t.to_dense().to_sparse_csc(dense_dim=1)])
def test_hybrid_compressed_tensors_as_torch(convert):
    """CSR/CSC with dense dims (PyG's multi-dim edge attributes): arrays, dims, dense form,
    the COO entries, and the constructor's default size."""
    ours, theirs = convert(_hybrid(tl)), convert(_hybrid(torch))
    assert ours.layout is getattr(tl, str(theirs.layout).split(".")[-1])
    assert (ours.sparse_dim(), ours.dense_dim(), ours.shape) == \
        (theirs.sparse_dim(), theirs.dense_dim(), tuple(theirs.shape))
    assert repr(ours).replace("tensorlib.", "torch.") == repr(theirs)
    np.testing.assert_array_equal(ours.to_dense().numpy(), theirs.to_dense().numpy())
    coo, coo_t = ours.to_sparse(), theirs.to_sparse()
    assert coo._indices().tolist() == coo_t._indices().tolist()
    assert coo._values().tolist() == coo_t._values().tolist()
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions, "
                                           "but self is 3D"):
        ours.t()


def test_hybrid_constructor_size():
    values = tl.arange(6.0).view(3, 2)
    assert tl.sparse_csr_tensor([0, 1, 3, 3], [1, 0, 2], values).shape == (3, 3, 2)
    assert tl.sparse_csc_tensor([0, 1, 3], [1, 0, 2], values).shape == (3, 2, 2)
    with pytest.raises(RuntimeError, match="dense dims of values \\[2\\]"):
        tl.sparse_csr_tensor([0, 1, 3, 3], [1, 0, 2], values, (3, 3))
