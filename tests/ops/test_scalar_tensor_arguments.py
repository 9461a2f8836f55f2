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


@pytest.mark.parametrize("value", [np.float32(0.5), np.float64(0.5), np.int64(2),
                                   np.bool_(True), np.float16(1.5)], ids=repr)
@pytest.mark.parametrize("dtype", [tl.float16, tl.float32, tl.int64], ids=str)
def test_numpy_scalars_are_python_numbers_in_arithmetic(value, dtype):
    """PyTorch reads a NumPy scalar as the Python number it holds: it takes part in type
    promotion as a number (it does not widen a float16 tensor), and `x + v` is a tensor, not
    NumPy's array (NumPy's reflected operator never gets the call)."""
    x = tl.ones(3, dtype=dtype)
    plain = value.item()
    pairs = [(x + value, x + plain), (value * x, plain * x),
             (x.clamp(min=value), x.clamp(min=plain))]
    if not isinstance(plain, bool):            # a bool refuses subtraction either way
        pairs.append((tl.maximum(x, tl.tensor(0, dtype=dtype)) - value, x - plain))
    for got, expected in pairs:
        assert isinstance(got, tl.Tensor)
        assert got.dtype is expected.dtype
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
    if tl.result_type(x, plain).category <= dtype.category:
        y = x.clone()
        y.mul_(value)
        np.testing.assert_array_equal(y.numpy(), (x * plain).numpy())
    assert tl.result_type(x, value) is tl.result_type(x, plain)
