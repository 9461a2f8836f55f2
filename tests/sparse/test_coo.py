"""Sparse COO tensors against torch: construction (size inference, dtypes, hybrid values,
PyTorch's errors), coalesce, the accessors, conversions both ways, transposes, arithmetic,
printing, moves and casts, the legacy constructors, and dense ops refused with PyTorch's
NotImplementedError naming the op and the layout."""
import copy
import pickle

import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks",
                                        "ignore:Sparse CSR tensor support is in beta")

INDICES = [[0, 1, 1, 0], [2, 0, 2, 2]]          # (0, 2) twice: uncoalesced
VALUES = [3.0, 4.0, 5.0, 1.0]


def _pair(indices=INDICES, values=VALUES, size=(2, 3), device="cpu", **kwargs):
    ours = tl.sparse_coo_tensor(tl.tensor(indices), tl.tensor(values), size, device=device,
                                **kwargs)
    theirs = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), size,
                                     **kwargs)
    return ours, theirs


def _same(ours, theirs):
    assert ours.layout is getattr(tl, str(theirs.layout).split(".")[-1])
    if theirs.layout is torch.strided:
        np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
        return
    assert ours.shape == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.to_dense().detach().cpu().numpy(),
                               theirs.to_dense().detach().numpy(), rtol=1e-5, atol=1e-6)


def test_construct_and_accessors(device):
    s, t = _pair(device=device)
    assert isinstance(s, tl.Tensor) and s.is_sparse and not s.is_sparse_csr
    assert s.layout is tl.sparse_coo and s.device == tl.ones(1, device=device).device
    assert (s._nnz(), s.sparse_dim(), s.dense_dim(), s.dim(), s.numel()) == \
        (t._nnz(), t.sparse_dim(), t.dense_dim(), t.dim(), t.numel())
    assert s.is_coalesced() == t.is_coalesced() is False
    np.testing.assert_array_equal(s._indices().cpu().numpy(), t._indices().numpy())
    np.testing.assert_array_equal(s._values().cpu().numpy(), t._values().numpy())
    _same(s, t)
    c, tc = s.coalesce(), t.coalesce()
    assert c.is_coalesced()
    np.testing.assert_array_equal(c.indices().cpu().numpy(), tc.indices().numpy())
    np.testing.assert_array_equal(c.values().cpu().numpy(), tc.values().numpy())


def test_size_inference_dtypes_and_lists():
    s = tl.sparse_coo_tensor(tl.tensor(INDICES), tl.tensor(VALUES))
    assert s.shape == (2, 3)
    s = tl.sparse_coo_tensor([[0, 1], [1, 0]], [1, 2], [2, 2], dtype=tl.float64)
    assert s.dtype is tl.float64 and s.shape == (2, 2)
    assert tl.sparse_coo_tensor([[0, 1], [1, 0]], [1, 2], [2, 2]).dtype is tl.int64
    s = tl.sparse_coo_tensor(tl.tensor(INDICES, dtype=tl.int32), tl.tensor(VALUES), (2, 3))
    assert s._indices().dtype is tl.int64
    empty = tl.sparse_coo_tensor(tl.zeros((2, 0), dtype=tl.int64), tl.zeros(0), (2, 3))
    assert empty._nnz() == 0 and empty.to_dense().abs().sum().item() == 0


def test_hybrid_values():
    s, t = _pair([[0, 2]], np.arange(6.0).reshape(2, 3).tolist(), (3, 3))
    assert (s.sparse_dim(), s.dense_dim()) == (1, 1)
    _same(s, t)
    d = np.array([[0.0, 1.0], [0.0, 0.0], [2.0, 3.0]])
    _same(tl.tensor(d).to_sparse(1), torch.tensor(d).to_sparse(1))
    assert tl.tensor(d).to_sparse(1)._nnz() == 2


@pytest.mark.parametrize("make, message", [
    (lambda m: m.sparse_coo_tensor(m.tensor([0, 1]), m.tensor([1.0, 2.0]), (3,)),
     "'len(size) == sparse_dim + dense_dim' is not satisfied"),
    (lambda m: m.sparse_coo_tensor(m.tensor(INDICES), m.tensor(VALUES[:3]), (2, 3)),
     "indices and values must have same nnz, but got nnz from indices: 4, nnz from values: 3"),
    (lambda m: m.sparse_coo_tensor(m.tensor(INDICES), m.tensor(VALUES), (2,)),
     "'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = 1, sparse_dim = 2"),
    (lambda m: m.sparse_coo_tensor([[0, 1]], m.ones(2, 3), (2, 4)),
     "values has incorrect size, expected [2, 4], got [2, 3]"),
])
def test_construction_errors(make, message):
    with pytest.raises(RuntimeError) as theirs:
        make(torch)
    with pytest.raises(RuntimeError) as ours:
        make(tl)
    assert message in str(theirs.value) and message in str(ours.value)


def test_indices_out_of_size_raise():
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 1, "
                                           "size is 2 but found index 2"):
        tl.sparse_coo_tensor(tl.tensor(INDICES), tl.tensor(VALUES), (2, 2))
    with pytest.raises(RuntimeError, match="negative index"):
        tl.sparse_coo_tensor(tl.tensor([[0, -1]]), tl.tensor([1.0, 2.0]), (3,))


def test_uncoalesced_accessors_raise_like_torch():
    s, t = _pair()
    for name in ("indices", "values"):
        with pytest.raises(RuntimeError) as theirs:
            getattr(t, name)()
        with pytest.raises(RuntimeError) as ours:
            getattr(s, name)()
        assert str(ours.value) == str(theirs.value)


def test_dense_to_sparse_and_back(device):
    d = np.array([[0.0, 1.5, 0.0], [-2.0, 0.0, 3.0]], np.float32)
    s, t = tl.tensor(d, device=device).to_sparse(), torch.tensor(d).to_sparse()
    assert s.is_coalesced() and s._nnz() == t._nnz() == 3
    np.testing.assert_array_equal(s.indices().cpu().numpy(), t.indices().numpy())
    _same(s, t)
    dense = tl.tensor(d, device=device)
    assert dense.to_dense() is dense and dense.layout is tl.strided and not dense.is_sparse
    assert s.to_sparse() is s


def test_transpose(device):
    s, t = _pair(device=device)
    for ours, theirs in ((s.t(), t.t()), (s.transpose(0, 1), t.transpose(0, 1)),
                         (s.T, t.T), (s.mT, t.mT)):
        _same(ours, theirs)
    cube = tl.sparse_coo_tensor(tl.zeros((3, 1), dtype=tl.int64), tl.ones(1), (2, 2, 2))
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 sparse and 0 "
                                           r"dense dimensions, but got 3 sparse"):
        cube.t()


def test_arithmetic(device):
    s, t = _pair(device=device)
    s2, t2 = _pair([[1, 0], [1, 2]], [10.0, 20.0], device=device)
    for ours, theirs in ((s + s2, t + t2), (s - s2, t - t2), (s * 2, t * 2), (3 * s, 3 * t),
                         (s / 4, t / 4), (-s, -t), (s.add(s2, alpha=2), t.add(t2, alpha=2))):
        _same(ours, theirs)
    d = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    _same(tl.tensor(d, device=device) + s, torch.tensor(d) + t)
    _same(tl.tensor(d, device=device) - s, torch.tensor(d) - t)
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported. Use "
                                           r"add\(dense, sparse\) instead."):
        s + tl.tensor(d, device=device)
    other, _ = _pair(size=(3, 3))
    with pytest.raises(RuntimeError, match=r"add: expected sizes of 'self' and 'other' to "
                                           r"match, but \[2, 3\] != \[3, 3\]"):
        _pair()[0] + other


def test_moves_casts_copies(device):
    s, t = _pair(device=device)
    for ours, theirs in ((s.to(tl.float64), t.to(torch.float64)), (s.double(), t.double()),
                         (s.cpu(), t.cpu()), (s.detach(), t.detach()), (s.clone(), t.clone()),
                         (s.to("cpu"), t.to("cpu"))):
        _same(ours, theirs)
    assert s.to(tl.float64).dtype is tl.float64
    assert s.type() == "tensorlib.sparse.FloatTensor"
    host = s.cpu()
    assert host.to("cpu") is host and host.cpu() is host
    back = pickle.loads(pickle.dumps(s))
    _same(back, t)
    _same(copy.deepcopy(s), t)


def test_repr_matches_torch():
    cases = [_pair(), _pair(requires_grad=True),
             (tl.sparse_coo_tensor([[0, 1]], tl.ones(2, 3, dtype=tl.float64)),
              torch.sparse_coo_tensor([[0, 1]], torch.ones(2, 3, dtype=torch.float64))),
             (tl.sparse.FloatTensor(2, 3), torch.sparse.FloatTensor(2, 3))]
    for ours, theirs in cases:
        assert repr(ours) == repr(theirs).replace("torch.", "tensorlib.")


def test_legacy_constructors():
    i, v = tl.tensor(INDICES), tl.tensor(VALUES)
    for args in ((i, v, tl.Size([2, 3])), (i, v, (2, 3)), (i, v)):
        s = tl.sparse.FloatTensor(*args)
        assert s.is_sparse and s.shape == (2, 3) and s.dtype is tl.float32
    assert tl.sparse.FloatTensor(i, v.double(), (2, 3)).dtype is tl.float64   # as torch's
    assert tl.sparse.DoubleTensor(i, v.double(), (2, 3)).dtype is tl.float64
    assert tl.sparse.LongTensor(i, v.long(), (2, 3)).dtype is tl.int64
    empty = tl.sparse.FloatTensor(2, 3)
    assert empty.shape == (2, 3) and empty._nnz() == 0 and empty.dtype is tl.float32
    assert isinstance(tl.sparse_coo_tensor(i, v), tl.sparse.FloatTensor)
    assert not isinstance(tl.sparse_coo_tensor(i, v), tl.sparse.DoubleTensor)
    with pytest.raises(TypeError, match="new\\(\\) received an invalid combination"):
        tl.sparse.FloatTensor(INDICES, VALUES, (2, 3))


def test_layouts():
    assert repr(tl.strided) == "tensorlib.strided" and str(tl.sparse_csr) == \
        "tensorlib.sparse_csr"
    assert isinstance(tl.sparse_coo, tl.layout)
    assert pickle.loads(pickle.dumps(tl.sparse_coo)) is tl.sparse_coo
    assert copy.deepcopy(tl.strided) is tl.strided
    with pytest.raises(TypeError):
        tl.layout()
    assert tl.ones(2).layout is tl.strided


@pytest.mark.parametrize("call", [
    lambda m, s: s.exp(), lambda m, s: m.exp(s), lambda m, s: s.view(-1),
    lambda m, s: s == s, lambda m, s: s.mean()])
def test_dense_ops_refused_like_torch(call):
    s, t = _pair()
    with pytest.raises(NotImplementedError) as theirs:
        call(torch, t)
    with pytest.raises(NotImplementedError) as ours:
        call(tl, s)
    assert "with arguments from the 'SparseCPU' backend" in str(theirs.value)
    assert "with arguments from the 'SparseCPU' backend" in str(ours.value)
    op = str(theirs.value).split("'")[1].split("::")[1].split(".")[0]
    assert f"'aten::{op}'" in str(ours.value)


def test_dense_methods_on_the_wrong_layout():
    s, t = _pair()
    with pytest.raises(TypeError, match="can't convert Sparse layout tensor to numpy. Use "
                                        "Tensor.to_dense\\(\\) first."):
        s.numpy()
    d, td = tl.ones(2, 2), torch.ones(2, 2)
    for name in ("indices", "values", "coalesce", "is_coalesced", "crow_indices"):
        with pytest.raises(RuntimeError) as theirs:
            getattr(td, name)()
        with pytest.raises(RuntimeError) as ours:
            getattr(d, name)()
        assert str(ours.value) == str(theirs.value)
    assert (d.sparse_dim(), d.dense_dim()) == (0, 2)
    with pytest.raises(RuntimeError, match="crow_indices expected sparse row compressed "
                                           "tensor layout but got Sparse"):
        s.crow_indices()
    # a dense op never computes on a sparse tensor's placeholder fields (add takes one: see
    # test_mixed.py)
    with pytest.raises(NotImplementedError, match="SparseCPU"):
        tl.maximum(tl.ones(2, 3), s)
    with pytest.raises(NotImplementedError, match="SparseCPU"):
        tl.reshape(s, (6,)).sum()


def test_save_and_load(tmp_path):
    s = _pair()[0]
    coalesced, csr = s.coalesce(), tl.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse_csr()
    tl.save({"s": s, "c": coalesced, "csr": csr, "again": s}, tmp_path / "m.pt")
    back = tl.load(tmp_path / "m.pt")
    assert back["s"] is back["again"] and not back["s"].is_coalesced()
    assert back["c"].is_coalesced() and back["csr"].is_sparse_csr
    for name in ("s", "c", "csr"):
        np.testing.assert_array_equal(back[name].to_dense().numpy(),
                                      {"s": s, "c": coalesced, "csr": csr}[name]
                                      .to_dense().numpy())


def test_fuzzer_findings_match_torch():
    """What the layouts fuzzer found: transposing a dense dim raises PyTorch's RuntimeError
    (the same dim twice is the tensor itself), to_sparse checks sparse_dim's range, and a
    hybrid tensor whose dense dim has size 0 converts to dense."""
    for lib in (tl, torch):
        s = lib.sparse_coo_tensor(lib.tensor([[0, 1]]), lib.ones(2, 3, 4), (2, 3, 4))
        with pytest.raises(RuntimeError, match="transposed dimensions must be sparse"):
            s.transpose(1, 2)
        assert tuple(s.transpose(2, 2).shape) == (2, 3, 4)
        for bad in (0, 3):
            with pytest.raises(RuntimeError, match="dense_to_sparse: sparse_dim"):
                lib.zeros(2, 2).to_sparse(bad)
        empty = lib.sparse_coo_tensor(lib.tensor([[0, 2, 2]]), lib.zeros(3, 0), (3, 0))
        assert tuple(empty.to_dense().shape) == (3, 0)


def test_sparse_coo_tensor_of_a_size_alone_is_empty():
    """PyTorch's size-only overload: no indices or values, nnz 0, coalesced."""
    for made in (tl.sparse_coo_tensor(size=(5, 3)), tl.sparse_coo_tensor((5, 3))):
        assert made.shape == (5, 3) and made.dtype == tl.float32 and made._nnz() == 0
        assert made.sparse_dim() == 2 and made.dense_dim() == 0 and made.is_coalesced()
        assert made.to_dense().abs().sum().item() == 0
    assert tl.sparse_coo_tensor(size=(2, 2), dtype=tl.float64).dtype == tl.float64
    with pytest.raises(TypeError, match="indices and values, or a size"):
        tl.sparse_coo_tensor()


def test_coalesced_flag_is_set_without_checking_as_in_torch():
    """Tensor._coalesced_ (PyG's to_torch_coo_tensor marks its sorted indices so): in place,
    returns self, trusts the caller; dense and CSR tensors refuse it."""
    ours, theirs = _pair(indices=[[0, 1], [2, 0]], values=[3.0, 4.0])
    for t in (ours, theirs):
        assert not t.is_coalesced()
        assert t._coalesced_(True) is t and t.is_coalesced()
    assert ours.indices().tolist() == theirs.indices().tolist()
    _same(ours.values(), theirs.values())
    dup, dup_t = _pair()
    dup._coalesced_(True)
    dup_t._coalesced_(True)
    assert dup.values().tolist() == dup_t.values().tolist()       # not merged: trusted
    for t in (ours, theirs):
        t._coalesced_(False)
        assert not t.is_coalesced()
    for lib in (tl, torch):
        with pytest.raises(NotImplementedError, match="aten::_coalesced_"):
            lib.ones(2)._coalesced_(True)
        with pytest.raises(NotImplementedError, match="aten::_coalesced_"):
            lib.ones(2, 2).to_sparse_csr()._coalesced_(True)


@pytest.mark.parametrize("flag", ["is_nested", "is_mkldnn", "is_xpu", "is_mps", "is_ipu",
                                  "is_xla", "is_mtia", "is_maia", "is_vulkan", "is_quantized",
                                  "is_meta"])
def test_layout_independent_flags_read_false_on_sparse_tensors(flag):
    """PyG's Batch collation asks a sparse tensor `is_nested`; PyTorch answers these flags
    for every layout."""
    for lib in (tl, torch):
        coo = lib.ones(2, 2).to_sparse()
        for t in (coo, coo.to_sparse_csr(), coo.to_sparse_csc()):
            assert getattr(t, flag) is False


@pytest.mark.parametrize("coalesce", [False, True])
@pytest.mark.parametrize("dim, index", [(0, [2, 0, 0]), (1, [1, 2]), (1, [2, 1, 1]), (0, []),
                                        (-1, [0]), (0, [-1, 1])])
def test_index_select_matches_torch(coalesce, dim, index):
    """Tensor.index_select on COO (PyG's Batch collation of sparse attributes): entry order,
    renumbering, coalesced flag, sizes."""
    outs = []
    for lib in (tl, torch):
        s = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1, 2, 0], [2, 0, 2, 1, 1]]),
                                  lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), (3, 3))
        s = s.coalesce() if coalesce else s
        out = s.index_select(dim, lib.tensor(index, dtype=lib.int64))
        by_function = lib.index_select(s, dim, lib.tensor(index, dtype=lib.int64))
        assert by_function._indices().tolist() == out._indices().tolist()
        outs.append((out._indices().tolist(), out._values().tolist(), out.is_coalesced(),
                     tuple(out.shape)))
    assert outs[0] == outs[1]


def test_index_select_dense_dim_and_errors_match_torch():
    outs = []
    for lib in (tl, torch):
        h = lib.sparse_coo_tensor(lib.tensor([[0, 1, 2], [2, 0, 1]]),
                                  lib.arange(6.0).view(3, 2), (3, 3, 2)).coalesce()
        out = h.index_select(2, lib.tensor([1, 1]))
        outs.append((out._indices().tolist(), out._values().tolist(), out.is_coalesced()))
        s = h.sum(2)
        with pytest.raises(IndexError, match="index contains 3 that is out of range for "
                                             "tensor of size \\[3, 3\\] at dimension 0"):
            s.index_select(0, lib.tensor([3]))
        with pytest.raises(IndexError, match="must be 1-D strided \\(non-sparse\\) long"):
            s.index_select(0, lib.tensor([0], dtype=lib.int32))
        with pytest.raises(IndexError, match="must be 1-D strided \\(non-sparse\\) long"):
            s.index_select(0, lib.tensor(0))
    assert outs[0] == outs[1]
