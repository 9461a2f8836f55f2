"""number / tensor is PyTorch's Tensor.__rtruediv__: reciprocal(tensor) * number, rounded
twice, so it can differ from torch.div(number, tensor) in the last bit; compared with torch
bit for bit over dtypes, and its gradient."""
import math

import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

NUMBERS = [math.sqrt(2.0), 3, 0.1, -7.25, True, 1e30, 2.5j]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64",
                                   "int32", "bool", "complex64"])
def test_number_over_tensor_rounds_as_torch(dtype):
    rng = np.random.default_rng(0)
    values = rng.standard_normal(64) * 10
    values[0] = 0.7071067690849304               # 2 ** 0.5 / it is 2 - 1ulp in PyTorch
    theirs_t = torch.tensor(values).to(getattr(torch, dtype))
    ours_t = tl.tensor(theirs_t.to(torch.complex128 if dtype == "complex64" else
                                   torch.float64).numpy()).to(getattr(tl, dtype))
    for number in NUMBERS:
        if isinstance(number, complex) and dtype in ("float16", "bfloat16"):
            continue                # PyTorch's result is complex32 (experimental there)
        theirs, ours = number / theirs_t, number / ours_t
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1], number
        wide = torch.complex128 if theirs.is_complex() else torch.float64
        np.testing.assert_array_equal(ours.to(getattr(tl, str(wide).split(".")[1])).numpy(),
                                      theirs.to(wide).numpy(), err_msg=str(number))


def test_torch_div_of_a_number_stays_the_rounded_quotient():
    t = tl.tensor([0.7071067690849304])
    assert tl.div(math.sqrt(2.0), t).item() == 2.0
    assert (math.sqrt(2.0) / t).item() == float.fromhex("0x1.fffffep+0")


def test_gradient_matches_torch():
    values = np.array([0.5, -2.0, 3.0])
    ours = tl.tensor(values, requires_grad=True)
    theirs = torch.tensor(values, requires_grad=True)
    (3.0 / ours).sum().backward()
    (3.0 / theirs).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-15)


def test_unsupported_operands_still_raise_type_error():
    with pytest.raises(TypeError):
        "a" / tl.ones(2)
