"""Integer arguments given as 0-dim integer tensors or numpy integers, as torch takes them
(code computes a size or a count with tensor ops and passes the result on:
`torch.linspace(-0.5, 0.5, levels[i])`); floating point, bool and one-element 1-d tensors
stay refused with TypeError, as in torch."""
import numpy as np
import pytest

import tensorlib as tl

LEVELS = tl.tensor([3, 5])


def test_linspace_and_logspace_take_an_integer_tensor_as_steps():
    np.testing.assert_allclose(tl.linspace(-0.5, 0.5, LEVELS[0]).numpy(), [-0.5, 0.0, 0.5])
    assert tl.logspace(0, 1, LEVELS[1]).shape == (5,)
    assert tl.linspace(0, 1, tl.tensor(2, dtype=tl.uint8)).tolist() == [0.0, 1.0]


@pytest.mark.parametrize("steps", [tl.tensor(2.0), tl.tensor([2, 3]), tl.tensor([3]),
                                   tl.tensor(True)])
def test_linspace_refuses_other_tensors_as_steps(steps):
    with pytest.raises(TypeError, match="steps"):
        tl.linspace(0, 1, steps)


def test_sizes_and_dims_take_integer_scalars():
    x = tl.arange(12.0).reshape(3, 4)
    assert tl.zeros(2, LEVELS[0]).shape == (2, 3)
    assert tl.ones(3).view(tl.tensor(3)).shape == (3,)
    assert tl.ones(3).view(np.int64(3)).shape == (3,)
    assert tl.ones(3).view(tl.tensor(3)).shape == (3,)
    assert x.sum(tl.tensor(1)).tolist() == x.sum(1).tolist()
    assert x.sum(np.int64(-1)).tolist() == x.sum(-1).tolist()
    with pytest.raises(TypeError):
        tl.zeros(tl.tensor(2.0))
    with pytest.raises(TypeError):
        x.sum(tl.tensor(1.0))
