"""Basic indexing makes views (numpy semantics); an integer index tensor selects."""
import numpy as np
import pytest

import tensorlib as tl

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
    with pytest.raises(IndexError, match="out of bounds"):
        t[[0, 5]]
    with pytest.raises(NotImplementedError, match="boolean mask"):
        t[tl.tensor([True, False])]
