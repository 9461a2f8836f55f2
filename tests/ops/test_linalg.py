"""matmul against numpy float64: 1-D operands, batching, broadcasting, layouts, errors."""
import numpy as np
import pytest

import tensorlib as tl
from tests.ops.layouts import LAYOUTS, make

rng = np.random.default_rng(3)


@pytest.mark.parametrize("a_shape, b_shape", [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (4, 3, 2)), ((2, 1, 2, 3), (3, 3, 2)), ((2, 0), (0, 3)),
    ((2, 3, 4, 5), (5, 6)), ((0, 2, 3), (3, 4)), ((3, 0, 2), (2, 4)), ((2, 3, 0), (0, 4)),
])
def test_matmul_shapes(a_shape, b_shape, device):
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    got = (tl.tensor(a, device=device) @ tl.tensor(b, device=device)).cpu().numpy()
    expected = a.astype(np.float64) @ b.astype(np.float64)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transposed", [False, True])
def test_matmul_of_a_stack_by_a_matrix_and_its_gradients(transposed):
    """N-D @ 2-D (one product over all the rows in the CPU kernel), contiguous or strided."""
    a = rng.standard_normal((3, 4, 5))
    b = rng.standard_normal((5, 2))
    ta = tl.tensor(a.transpose(1, 0, 2).copy() if transposed else a, requires_grad=True)
    x = ta.transpose(0, 1) if transposed else ta
    tb = tl.tensor(b, requires_grad=True)
    out = x @ tb
    np.testing.assert_allclose(out.detach().numpy(), a @ b, rtol=1e-12)
    g = rng.standard_normal((3, 4, 2))
    out.backward(tl.tensor(g))
    grad_a = g @ b.T
    np.testing.assert_allclose(ta.grad.numpy(), grad_a.transpose(1, 0, 2) if transposed
                               else grad_a, rtol=1e-12)
    np.testing.assert_allclose(tb.grad.numpy(), np.einsum("bij,bik->jk", a, g), rtol=1e-12)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_matmul_layouts(layout, device):
    a = rng.standard_normal((4, 4)).astype(np.float32)
    b = rng.standard_normal((4, 4)).astype(np.float32)
    x = make(a, layout, device)
    y = make(b, "transposed" if layout == "contiguous" else layout, device)
    expected = x.cpu().numpy().astype(np.float64) @ y.cpu().numpy().astype(np.float64)
    np.testing.assert_allclose(tl.matmul(x, y).cpu().numpy(), expected, rtol=1e-5, atol=1e-5)


def test_matmul_dtypes_and_errors():
    ints = tl.tensor([[1, 2], [3, 4]])
    assert (ints @ ints).tolist() == [[7, 10], [15, 22]]
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x3 and 4x5\)"):
        tl.zeros(2, 3) @ tl.zeros(4, 5)
    with pytest.raises(RuntimeError, match="same dtype"):
        tl.zeros(2, 2) @ tl.zeros(2, 2, dtype=tl.float64)
    with pytest.raises(RuntimeError, match="at least 1D"):
        tl.matmul(tl.tensor(1.0), tl.zeros(2))
    assert tl.mm(tl.ones(2, 3), tl.ones(3, 1)).tolist() == [[3.0], [3.0]]
