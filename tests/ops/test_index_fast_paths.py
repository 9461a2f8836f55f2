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


MASKS = [lambda t: t > 0, lambda t: t[0, 0, 0] > 0, lambda t: (t > 0)[:, 1],
         lambda t: t.sum((1, 2)) > 0, lambda t: (t > 0).transpose(0, 2), lambda t: t > 99]


@pytest.mark.parametrize("make_mask", MASKS)
def test_nonzero_matches_torch(make_mask):
    a = np.random.default_rng(3).standard_normal((5, 6, 7))
    ours, theirs = make_mask(tl.from_numpy(a)), make_mask(torch.from_numpy(a))
    assert np.array_equal(tl.nonzero(ours).numpy(), torch.nonzero(theirs).numpy())
    pairs = list(zip(tl.nonzero(ours, as_tuple=True), torch.nonzero(theirs, as_tuple=True)))
    assert len(pairs) == len(torch.nonzero(theirs, as_tuple=True))
    assert all(np.array_equal(u.numpy(), v.numpy()) for u, v in pairs)
    assert np.array_equal(tl.nonzero(ours.int()).numpy(), torch.nonzero(theirs.int()).numpy())


@pytest.mark.parametrize("make_mask", [lambda t: t > 0, lambda t: t.sum((1, 2)) > 0,
                                       lambda t: t > 99, lambda t: (t > 0)[:, :, 0]])
def test_bool_mask_indexing_matches_torch_with_gradients(make_mask):
    a = np.random.default_rng(4).standard_normal((5, 6, 7))
    results = []
    for m in (tl, torch):
        t = m.from_numpy(a.copy()).requires_grad_()
        picked = t[make_mask(t.detach())]
        (picked * 3).sum().backward()
        results.append((picked.detach().numpy(), t.grad.numpy()))
    for ours, theirs in zip(*results):
        assert ours.shape == theirs.shape and np.array_equal(ours, theirs)


def test_mask_of_the_wrong_shape_raises_as_torch():
    a = np.zeros((4, 3))
    with pytest.raises(IndexError) as ours:
        tl.from_numpy(a)[tl.tensor([True, False, True])]
    with pytest.raises(IndexError) as theirs:
        torch.from_numpy(a)[torch.tensor([True, False, True])]
    assert str(ours.value) == str(theirs.value)
