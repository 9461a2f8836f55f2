"""Sparse CSR matrices against torch: construction and its invariant errors, the accessors,
conversions from and to dense and COO, CSR @ dense (with the dense operand's gradient),
scaling, printing, and what tensorlib refuses (autograd through the CSR tensor itself)."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta",
                                        "ignore:Sparse invariant checks")

DENSE = np.array([[0.0, 1.5, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, -1.0, 0.0]],
                 np.float32)
CROW, COL, VAL = [0, 2, 2, 4], [1, 3, 0, 2], [1.5, 2.0, 3.0, -1.0]


def _np(t):
    dense = t if t.layout in (tl.strided, torch.strided) else t.to_dense()
    return dense.detach().cpu().numpy()


def test_construct_and_accessors(device):
    ours = tl.sparse_csr_tensor(tl.tensor(CROW), tl.tensor(COL), tl.tensor(VAL), (3, 4),
                                device=device)
    theirs = torch.sparse_csr_tensor(torch.tensor(CROW), torch.tensor(COL), torch.tensor(VAL),
                                     (3, 4))
    assert isinstance(ours, tl.Tensor) and ours.is_sparse_csr and not ours.is_sparse
    assert ours.layout is tl.sparse_csr and ours.shape == (3, 4) and ours._nnz() == 4
    for name in ("crow_indices", "col_indices", "values"):
        np.testing.assert_array_equal(getattr(ours, name)().cpu().numpy(),
                                      getattr(theirs, name)().numpy())
    np.testing.assert_array_equal(_np(ours), DENSE)
    inferred = tl.sparse_csr_tensor(CROW, COL, VAL)
    assert inferred.shape == torch.sparse_csr_tensor(CROW, COL, VAL).shape


def test_conversions(device):
    dense = tl.tensor(DENSE, device=device)
    csr, t_csr = dense.to_sparse_csr(), torch.tensor(DENSE).to_sparse_csr()
    for name in ("crow_indices", "col_indices", "values"):
        np.testing.assert_array_equal(getattr(csr, name)().cpu().numpy(),
                                      getattr(t_csr, name)().numpy())
    coo = csr.to_sparse()
    assert coo.is_sparse and coo.is_coalesced()
    np.testing.assert_array_equal(coo.indices().cpu().numpy(),
                                  t_csr.to_sparse().coalesce().indices().numpy())
    back = dense.to_sparse().to_sparse_csr()
    np.testing.assert_array_equal(back.crow_indices().cpu().numpy(), CROW)
    assert csr.to_sparse_csr() is csr and dense.to_sparse(layout=tl.sparse_csr).is_sparse_csr
    np.testing.assert_array_equal(_np(csr.t()), DENSE.T)
    np.testing.assert_array_equal(_np(csr * 2), DENSE * 2)
    np.testing.assert_array_equal(_np(-csr), -DENSE)
    np.testing.assert_array_equal(_np(csr.to(tl.float64)), DENSE)
    assert csr.to(tl.float64).dtype is tl.float64


def test_csr_times_dense(device):
    rhs = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    outs = []
    for lib, dev in ((tl, device), (torch, "cpu")):
        d = lib.tensor(rhs, requires_grad=True, device=dev)
        csr = lib.tensor(DENSE, device=dev).to_sparse_csr()
        out = csr @ d
        (out * lib.tensor([[1.0, -2.0]], device=dev)).sum().backward()
        outs.append((out, d.grad, lib.mm(csr, d.detach()), csr @ lib.ones(4, device=dev)))
    for ours, theirs in zip(*outs):
        np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-6)


def test_repr_matches_torch():
    for dense in (DENSE, np.zeros((2, 3), np.float32)):
        ours, theirs = tl.tensor(dense).to_sparse_csr(), torch.tensor(dense).to_sparse_csr()
        assert repr(ours) == repr(theirs).replace("torch.", "tensorlib.")


@pytest.mark.parametrize("crow, col, val, size, message", [
    ([0, 2, 2], COL, VAL, (3, 4),
     "crow_indices.shape[-1] must be equal to the number of rows + 1 (=4), but got 3"),
    ([1, 2, 2, 4], COL, VAL, (3, 4), "`crow_indices[..., 0] == 0` is not satisfied."),
    ([0, 2, 2, 3], COL, VAL, (3, 4), "`crow_indices[..., -1] == nnz` is not satisfied."),
    (CROW, [1, 3, 0, 4], VAL, (3, 4), "`0 <= col_indices < ncols` is not satisfied."),
])
def test_invariant_errors(crow, col, val, size, message):
    with pytest.raises(RuntimeError) as theirs:
        torch.sparse_csr_tensor(crow, col, val, size, check_invariants=True)
    with pytest.raises(RuntimeError) as ours:
        tl.sparse_csr_tensor(crow, col, val, size)
    assert message in str(theirs.value) and message in str(ours.value)


def test_layout_errors_and_refusals():
    csr = tl.tensor(DENSE).to_sparse_csr()
    t_csr = torch.tensor(DENSE).to_sparse_csr()
    for name in ("indices", "coalesce", "is_coalesced"):
        with pytest.raises(RuntimeError) as theirs:
            getattr(t_csr, name)()
        with pytest.raises(RuntimeError) as ours:
            getattr(csr, name)()
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="Sparse CSR tensors do not have strides"):
        csr.stride()
    with pytest.raises(TypeError, match="can't convert SparseCsr layout tensor to numpy"):
        csr.numpy()
    with pytest.raises(NotImplementedError, match="'aten::exp' with arguments from the "
                                                  "'SparseCsrCPU' backend"):
        csr.exp()
    with pytest.raises(NotImplementedError, match="does not differentiate through sparse CSR"):
        csr.requires_grad_()


@pytest.mark.parametrize("rows, size, out_int32", [
    ([0, 0, 2, 2, 3], 5, False), ([], 3, True), ([1, 1], 3, False), ([2, 2, 2], 3, True)])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_convert_indices_from_coo_to_csr_matches_torch(rows, size, out_int32, dtype):
    """torch._convert_indices_from_coo_to_csr (PyG's index2ptr): pointers, dtypes. Indices
    past `size` are left out: PyTorch's CPU kernel writes past its output for them."""
    ours = tl._convert_indices_from_coo_to_csr(tl.tensor(rows, dtype=getattr(tl, dtype)),
                                               size, out_int32=out_int32)
    theirs = torch._convert_indices_from_coo_to_csr(
        torch.tensor(rows, dtype=getattr(torch, dtype)), size, out_int32=out_int32)
    assert ours.tolist() == theirs.tolist()
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


@pytest.mark.parametrize("out_int32", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
def test_convert_indices_from_csr_to_coo_matches_torch(out_int32, transpose):
    crow, col = [0, 2, 2, 3], [1, 0, 2]
    ours = tl._convert_indices_from_csr_to_coo(tl.tensor(crow), tl.tensor(col),
                                               out_int32=out_int32, transpose=transpose)
    theirs = torch._convert_indices_from_csr_to_coo(torch.tensor(crow), torch.tensor(col),
                                                    out_int32=out_int32, transpose=transpose)
    assert ours.tolist() == theirs.tolist()
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


def test_convert_indices_errors_match_torch():
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match="supposed to be a vector, but got 2 dim"):
            lib._convert_indices_from_coo_to_csr(lib.tensor([[1, 1]]), 3)
        with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
            lib._convert_indices_from_coo_to_csr(lib.tensor([1.0]), 3)
