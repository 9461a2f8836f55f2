"""x[index] with an int64 tensor of rows (one index_select) and flip (an arange index) agree
with PyTorch, the negative, out-of-range, empty and multi-dimensional indices that the fast
path hands to the general one included, with gradients."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("index", [[3, 0, 3, 7], [[1, 2], [0, 7]], [], [-1, 2], [-8, 7]])
@pytest.mark.parametrize("shape,dtype", [((8,), np.float32), ((8, 5), np.float64),
                                         ((8, 3, 4), np.int32), ((8, 2), np.bool_)])
def test_rows_by_index_match_torch(index, shape, dtype):
    x = (np.random.default_rng(0).standard_normal(shape) * 5).astype(dtype)
    ours = tl.from_numpy(x)[tl.tensor(index, dtype=tl.int64)]
    theirs = torch.from_numpy(x)[torch.tensor(index, dtype=torch.int64)]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert np.array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("index", [[8], [-9], [0, 12]])
def test_out_of_range_rows_raise_as_torch(index):
    x = np.zeros((8, 2), np.float32)
    with pytest.raises(IndexError) as ours:
        tl.from_numpy(x)[tl.tensor(index)]
    with pytest.raises(IndexError) as theirs:
        torch.from_numpy(x)[torch.tensor(index)]
    assert str(ours.value) == str(theirs.value)


def test_rows_by_index_gradient_accumulates_repeats():
    x = np.random.default_rng(1).standard_normal((6, 4))
    grads = []
    for m in (tl, torch):
        t = m.from_numpy(x.copy()).requires_grad_()
        (t[m.tensor([2, 0, 2, 5, -1])] * m.arange(4.0)).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 2), (-1,), (0, 1, 2)])
def test_flip_matches_torch(dims):
    x = np.random.default_rng(2).standard_normal((3, 4, 5))
    for data in (x, x[:, :0]):
        ours = tl.from_numpy(data.copy()).flip(dims)
        assert np.array_equal(ours.numpy(), torch.from_numpy(data.copy()).flip(dims).numpy())
    t = tl.from_numpy(x.copy()).requires_grad_()
    (t.flip(dims) * tl.arange(5.0)).sum().backward()
    tt = torch.from_numpy(x.copy()).requires_grad_()
    (tt.flip(dims) * torch.arange(5.0)).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), tt.grad.numpy())
