"""tensorlib.Size (torch.Size): a tuple of Python ints, whatever integer-like items it is
built from, that stays a Size under slicing, + and *."""
import numpy as np
import pytest

import tensorlib as tl


def test_items_become_python_ints():
    """A mask's count (a 0-dim integer tensor) or a numpy integer is stored as its int, so
    `tuple(size) in {(3, 3)}` and equality with tuples of ints hold, as in PyTorch."""
    count = tl.tensor([1, 1, 0, 1, 0], dtype=tl.bool).sum()
    size = tl.Size((2, count, np.int64(3), True))
    assert size == (2, 3, 3, 1)
    assert all(type(v) is int for v in size)
    assert tuple(size[1:3]) in {(3, 3)}
    assert tl.Size([2]) + tl.Size((count,)) == (2, 3)


@pytest.mark.parametrize("bad", [2.0, "3", None, 1j])
def test_non_integer_items_raise_type_error(bad):
    with pytest.raises(TypeError, match=r"item 1 is"):
        tl.Size((2, bad))


def test_tensor_shape_is_a_size():
    x = tl.zeros(2, 3)
    assert type(x.shape) is tl.Size and x.shape == (2, 3) and x.size() == (2, 3)
    assert type(x.shape[:1]) is tl.Size
