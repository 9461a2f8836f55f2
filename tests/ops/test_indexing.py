"""Basic indexing makes views (numpy semantics); advanced indexing (index tensors, lists,
bool masks, Python bools) against numpy over layouts and hypothesis; x[key] = v, index_put(_)
with broadcasting and accumulate; errors; gradcheck of reading and writing."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck
from tests.ops.layouts import LAYOUTS, make

BASE = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("key", [
    0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), (0, None, slice(1, 3)),
    (slice(None, None, 2), Ellipsis, slice(1, None, 2)), (1, -1, -1), (Ellipsis,),
    (slice(-2, None), None, slice(None, -1)),
])
def test_basic_indexing_matches_numpy(key):
    t = tl.from_numpy(BASE.copy())
    got = t[key]
    np.testing.assert_array_equal(got.numpy(), BASE[key])
    assert got.untyped_storage() is t.untyped_storage()


def test_index_tensor_and_list_select(device):
    t = tl.tensor(BASE, device=device)
    np.testing.assert_array_equal(t[[1, 0]].cpu().numpy(), BASE[[1, 0]])
    np.testing.assert_array_equal(t[:, tl.tensor([2, 0, 2], device=device)].cpu().numpy(),
                                  BASE[:, [2, 0, 2]])
    np.testing.assert_array_equal(t[0, tl.tensor([[0, 1], [2, 2]])].cpu().numpy(),
                                  BASE[0, [[0, 1], [2, 2]]])


def test_setitem_broadcasts(device):
    t = tl.zeros(2, 3, device=device)
    t[0] = 1.5
    t[:, 2] = tl.tensor([7.0, 8.0], device=device)
    t[1, :2] = tl.tensor([4, 5], device=device)
    assert t.cpu().tolist() == [[1.5, 1.5, 7.0], [4.0, 5.0, 8.0]]


def test_index_errors():
    t = tl.zeros(2, 3)
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 0 with size 2"):
        t[2]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="tensors used as indices must be long"):
        t[tl.tensor([0.0])]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        t[[0, 5]]
    with pytest.raises(IndexError, match="index -4 is out of bounds for dimension 1 with size 3"):
        t[:, [-4]]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool"):
        t[tl.tensor([0], dtype=tl.int16)]
    with pytest.raises(IndexError, match=r"The shape of the mask \[3\] at index 0 does not match "
                                         r"the shape of the indexed tensor \[2, 3\] at index 0"):
        t[tl.tensor([True, False, True])]
    with pytest.raises(IndexError, match="shape mismatch: indexing tensors could not be broadcast"):
        t[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="only integers, slices"):
        t["a"]
    with pytest.raises(IndexError, match="too many indices"):
        t[tl.ones(2, 3, 1, dtype=tl.bool)]


# ---- advanced indexing --------------------------------------------------------------------
A = np.arange(4 * 5 * 6, dtype=np.float64).reshape(4, 5, 6)
I = np.array([[0, -1], [2, 3]])
J = np.array([1, -2])
M = (A.sum(2) % 3) == 0                                            # (4, 5) bool mask

NUMPY_KEYS = [                    # keys where numpy and PyTorch agree
    (I,), (slice(None), J), (I, J), (I, slice(None), J), (Ellipsis, J), (M,), (M, J[:1]),
    (slice(1, 3), M[0]), (slice(None), None, J, slice(None, None, 2)), ([0, 2], [1, 3], [4, 5]),
    ([],), (M[:, 0],), (Ellipsis, None, [1, 1, 1]), (True,), (False,), (M[0, 0],),
    (np.array([True, False, True, True]), slice(None), [0, 5, 1]),
]


def _key(k, device="cpu"):
    return tuple(tl.tensor(e, device=device) if isinstance(e, np.ndarray) else e for e in k)


KEYS_2D = [(I,), (slice(None), J), (I, J), (M,), (M[:, 0],), (Ellipsis, [4, 4, 0]),
           (None, [1, 2], None), (True, [0, -1]), (slice(None, None, 2), np.array([[0], [3]]))]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("key", range(len(KEYS_2D)))
def test_advanced_indexing_matches_numpy(layout, key):
    a = A[:, :, 0].copy()
    x = make(a, layout)                     # the broadcast layout rewrites `a` to its values
    k = KEYS_2D[key]
    np.testing.assert_array_equal(x[_key(k)].numpy(), a[k])


@pytest.mark.parametrize("key", range(len(NUMPY_KEYS)))
def test_advanced_indexing_3d_matches_numpy(key):
    k = NUMPY_KEYS[key]
    x = tl.tensor(A)
    np.testing.assert_array_equal(x[_key(k)].numpy(), A[k])
    xt = tl.tensor(np.ascontiguousarray(A.transpose(2, 0, 1))).permute(1, 2, 0)
    np.testing.assert_array_equal(xt[_key(k)].numpy(), A[k])


def test_ints_select_before_advanced_placement():
    """PyTorch applies ints as selects first (numpy would treat them as advanced indices)."""
    x = tl.tensor(A)
    assert x[0, :, [1, 2]].shape == (5, 2)
    assert x[tl.tensor(0), :, [1, 2]].shape == (5, 2)
    assert x[[0], :, [1, 2]].shape == (2, 5)                       # separated: block goes first
    assert x[None, [0, 1], None, [1, 2]].shape == (2, 1, 1, 6)
    np.testing.assert_array_equal(x[1, [2, 0], 1:3].numpy(), A[1][[2, 0], 1:3])


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 2**31),
       st.booleans())
def test_advanced_indexing_hypothesis(shape, seed, use_mask):
    r = np.random.default_rng(seed)
    a = r.standard_normal(shape)
    key = []
    for n in shape:
        kind = r.integers(0, 3)
        if kind == 0:
            key.append(r.integers(-n, n, r.integers(1, 3, 1)))
        elif kind == 1:
            key.append(slice(int(r.integers(0, n)), None))
        else:
            key.append(r.integers(-n, n, 2))
    if use_mask:
        key[0] = r.random(shape[0]) > 0.5
    key = tuple(key)
    try:
        want = a[key]
    except IndexError:                                              # arrays don't broadcast
        with pytest.raises(IndexError):
            tl.tensor(a)[_key(key)]
        return
    np.testing.assert_array_equal(tl.tensor(a)[_key(key)].numpy(), want)


# ---- writing ----------------------------------------------------------------------------------
SET_CASES = [
    ((I,), 7.0), ((slice(None), [1, 1, 3]), np.arange(6.0)), ((M,), np.arange(6.0)), ((M,), -1.0),
    ((0, [0, 0, 4], slice(None)), np.arange(18.0).reshape(3, 6)),
    ((Ellipsis, [2]), np.ones((5, 1))),
    ((slice(1, None), None, [0, 1]), np.ones((1, 1, 6))), ((M[0, 0],), 3.0), ((1, 2), 9.0),
    ((slice(None), 1), np.arange(6.0)),
]


@pytest.mark.parametrize("case", range(len(SET_CASES)))
def test_setitem_matches_numpy(case):
    k, v = SET_CASES[case]
    want = A.copy()
    want[k] = v                                  # numpy: the last of repeated writes wins too
    x = tl.tensor(A)
    version = x._version
    x[_key(k)] = tl.tensor(v) if isinstance(v, np.ndarray) else v
    np.testing.assert_array_equal(x.numpy(), want)
    assert x._version > version


def test_setitem_non_contiguous_and_dtype_conversion():
    base = tl.zeros(6, 4)
    x = base[::2].t()                                              # (4, 3) non-contiguous view
    x[[0, 3], 1:] = tl.tensor([1, 2], dtype=tl.float32)
    x[x == 0] = tl.tensor(0.5, dtype=tl.float64)         # a mask converts the value's dtype
    with pytest.raises(RuntimeError, match="dtypes match"):  # an index tensor does not (torch)
        x[[0, 3], 1:] = tl.tensor([1, 2], dtype=tl.int64)
    want = np.full((4, 3), 0.5)
    want[[0, 3], 1:] = [1, 2]
    np.testing.assert_array_equal(x.numpy(), want)
    np.testing.assert_array_equal(base.numpy()[::2].T, want)
    assert base.numpy()[1::2].sum() == 0


def test_index_put():
    x = tl.zeros(3, 4, dtype=tl.float64)
    idx = (tl.tensor([0, 0, 2]),)
    got = x.index_put(idx, tl.tensor([[1.0], [2.0], [3.0]], dtype=tl.float64), accumulate=True)
    assert got[:, 0].tolist() == [3.0, 0.0, 3.0] and x.sum().item() == 0
    got = x.index_put(idx, tl.tensor([[1.0], [2.0], [3.0]], dtype=tl.float64))
    assert got[:, 0].tolist() == [2.0, 0.0, 3.0]                  # the last write wins
    x.index_put_((tl.tensor([1, 1]), tl.tensor([2, 2])), tl.tensor(1.5, dtype=tl.float64),
                 accumulate=True)
    assert x[1, 2].item() == 3.0
    x.index_put_((tl.tensor([True, False, True]),), tl.tensor(4.0, dtype=tl.float64))
    assert x[:, 0].tolist() == [4.0, 0.0, 4.0]
    with pytest.raises(RuntimeError, match="Index put requires the source and destination "
                                           "dtypes match, got Double for the destination and "
                                           "Float for the source"):
        x.index_put_(idx, tl.tensor(1.0))
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\] cannot "
                                           r"be broadcast to indexing result of shape \[2, 4\]"):
        x[tl.tensor([True, False, True])] = tl.ones(3, dtype=tl.float64)
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 0 with size 3"):
        x.index_put_((tl.tensor([9]),), tl.tensor(1.0, dtype=tl.float64))


def test_index_put_accumulate_deterministic_with_many_duplicates():
    idx = (tl.tensor(np.random.default_rng(0).integers(0, 3, 3000)),)
    vals = tl.tensor(np.random.default_rng(1).standard_normal(3000) * 1e8)
    runs = {tuple(tl.zeros(3, dtype=tl.float64).index_put(idx, vals, True).tolist())
            for _ in range(3)}
    assert len(runs) == 1


def test_advanced_indexing_device(device):
    x = tl.tensor(A, device=device)
    m = tl.tensor(M, device=device)
    np.testing.assert_array_equal(x[m].cpu().numpy(), A[M])
    np.testing.assert_array_equal(x[tl.tensor(I), :, [0, 1]].cpu().numpy(), A[I, :, [0, 1]])
    x[m] = 0.0
    assert x.cpu().numpy()[M].sum() == 0


# ---- gradients --------------------------------------------------------------------------------
def _leaf(shape=(3, 4), layout="contiguous"):
    return make(np.random.default_rng(3).standard_normal(shape), layout).detach() \
        .requires_grad_()


READS = {
    "ints": lambda x: x[[2, 0, 2]],
    "two": lambda x: x[[0, 2, 2], [-1, 1, 1]],
    "mask": lambda x: x[x.detach() > 0],
    "mixed": lambda x: x[None, 1:, [3, 0, 3]],
    "bool": lambda x: x[True][:, [1]],
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "offset"])
@pytest.mark.parametrize("op", sorted(READS))
def test_getitem_gradcheck(op, layout):
    assert gradcheck(READS[op], (_leaf((3, 4), layout),))


def _put(x, v, accumulate):
    return x.index_put((tl.tensor([2, 0, 2]), tl.tensor([1, 1, 1])), v, accumulate)


def _assign(x, v):
    y = x * 1
    y[[2, 0, 2], 1:3] = v
    return y


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_index_put_gradcheck(layout):
    x, v = _leaf((3, 4), layout), _leaf((3,))
    assert gradcheck(lambda a, b: _put(a, b, False), (x, v))
    assert gradcheck(lambda a, b: _put(a, b, True), (x, v))
    assert gradcheck(_assign, (x, _leaf((1, 2))))
    assert gradcheck(lambda a, b: _assign(a, b * 2), (x, _leaf((3, 2))))


def test_getitem_and_index_put_gradgradcheck():
    assert gradgradcheck(lambda t: (t * t)[[1, 1, 0], [2, -1, 0]], (_leaf(),))
    assert gradgradcheck(lambda t, v: _put(t * t, v * v, True), (_leaf(), _leaf((3,))))


def test_setitem_leaf_error_and_grad_fn():
    leaf = tl.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf[[0]] = 1.0
    y = leaf * 1
    y[tl.tensor([True, False, True])] = 2.0
    assert type(y.grad_fn).__name__ == "IndexPutBackward0"
    y.sum().backward()
    assert leaf.grad.tolist() == [0.0, 1.0, 0.0]


def test_a_range_indexes_as_its_integers(device):
    """`logprobs[range(n), targets]` (a common way to pick each row's target) reads and
    writes as the list of the range's integers would."""
    x = tl.arange(12.0, device=device).reshape(3, 4)
    rows = tl.tensor([1, 0, 3], device=device)
    assert x[range(3), rows].tolist() == [1.0, 4.0, 11.0]
    assert x[:, range(0, 4, 2)].tolist() == x[:, [0, 2]].tolist()
    assert x[range(0)].shape == (0, 4)
    x[range(2), 0] = -1.0
    assert x[:, 0].tolist() == [-1.0, -1.0, 8.0]


@pytest.mark.parametrize("key", [
    [slice(0, 2), slice(None)], [[0, 1], [1, 0]], [Ellipsis, 1], [None], [0, None],
    [slice(1, None), [2, 0]],
], ids=str)
def test_short_list_of_slices_or_sequences_is_a_tuple_of_indices(key):
    """PyTorch (NumPy's old rule) reads such a list as the tuple of its items, with a
    deprecation warning, for reading and writing; a list of ints stays one index."""
    t = tl.from_numpy(BASE[0].copy())
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        got = t[key]
    np.testing.assert_array_equal(got.numpy(), BASE[0][tuple(key)])
    expected = BASE[0].copy()
    expected[tuple(key)] = -1
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        t[key] = -1
    np.testing.assert_array_equal(t.numpy(), expected)


def test_list_with_tensor_bound_slice_and_plain_int_lists():
    t = tl.from_numpy(BASE[0].copy())
    with pytest.warns(UserWarning):
        assert t[[slice(0, tl.tensor(2)), slice(None)]].shape == (2, 4)
    np.testing.assert_array_equal(t[[2, 0]].numpy(), BASE[0][[2, 0]])     # one index
    np.testing.assert_array_equal(t[np.array([[0, 1], [1, 0]])].numpy(),     # an array: too
                                  BASE[0][np.array([[0, 1], [1, 0]])])
