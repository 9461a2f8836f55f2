"""out= on every device: the result lands in `out` (resized, cast, through its strides), `out`
is returned, and PyTorch's errors for dtype, device and autograd. (The differential fuzzer in
tests/parity/test_fuzz_out.py compares the same rules against torch on many more ops.)"""
import warnings

import numpy as np
import pytest

import tensorlib


def _x(device, *shape, dtype=tensorlib.float32):
    n = int(np.prod(shape))
    return tensorlib.arange(n, dtype=tensorlib.float64, device=device).reshape(shape).to(dtype)


def test_out_is_written_and_returned(device):
    a, b = _x(device, 2, 3), _x(device, 3)
    out = tensorlib.empty(2, 3, device=device)
    assert tensorlib.add(a, b, out=out) is out
    np.testing.assert_array_equal(out.cpu().numpy(), (a + b).cpu().numpy())


def test_out_through_strides(device):
    a = _x(device, 3)
    base = tensorlib.zeros(3, 2, device=device)
    tensorlib.mul(a, 2, out=base[:, 1])
    np.testing.assert_array_equal(base.cpu().numpy(), [[0, 0], [0, 2], [0, 4]])


def test_resize_warns_only_when_out_had_elements(device):
    a = _x(device, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = tensorlib.exp(a, out=tensorlib.empty(0, device=device))
    assert out.shape == (4,) and not caught
    with pytest.warns(UserWarning, match="resized"):
        out = tensorlib.exp(a, out=tensorlib.empty(2, 5, device=device))
    assert out.shape == (4,) and out.is_contiguous()
    np.testing.assert_allclose(out.cpu().numpy(), np.exp(np.arange(4.0)), rtol=1e-6)


def test_cast_rules(device):
    ints = _x(device, 3, dtype=tensorlib.int64)
    out = tensorlib.add(ints, ints, out=tensorlib.empty(3, device=device))
    assert out.dtype == tensorlib.float32 and out.tolist() == [0.0, 2.0, 4.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        tensorlib.exp(ints, out=tensorlib.empty(3, dtype=tensorlib.int64, device=device))
    with pytest.raises(RuntimeError, match="dtype"):
        tensorlib.mm(_x(device, 2, 2), _x(device, 2, 2),
                     out=tensorlib.empty(2, 2, dtype=tensorlib.float64, device=device))


def test_reductions_and_tuples(device):
    x = _x(device, 2, 3)
    total = tensorlib.sum(x, 1, out=tensorlib.empty(2, dtype=tensorlib.int64, device=device))
    assert total.dtype == tensorlib.int64 and total.tolist() == [3, 12]
    values = tensorlib.empty(0, device=device)
    indices = tensorlib.empty(0, dtype=tensorlib.int64, device=device)
    result = tensorlib.max(x, 1, out=(values, indices))
    assert result.values is values and result.indices is indices
    assert values.tolist() == [2.0, 5.0] and indices.tolist() == [2, 2]
    with pytest.raises(RuntimeError, match="int64"):
        tensorlib.sort(x, out=(tensorlib.empty(0, device=device),
                               tensorlib.empty(0, device=device)))


def test_factories_take_out_dtype(device):
    out = tensorlib.empty(2, dtype=tensorlib.int64, device=device)
    with pytest.warns(UserWarning, match="number of elements"):
        assert tensorlib.arange(5, out=out) is out
    assert out.tolist() == [0, 1, 2, 3, 4] and out.dtype == tensorlib.int64
    assert tensorlib.full((2, 2), 7, out=out).tolist() == [[7, 7], [7, 7]]
    with pytest.raises(RuntimeError, match="does not match dtype of out"):
        tensorlib.zeros(3, dtype=tensorlib.float64, out=out)


def test_autograd_and_device_errors(device):
    a = _x(device, 3).requires_grad_()
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tensorlib.add(a, 1, out=tensorlib.empty(3, device=device))
    with tensorlib.no_grad():
        out = tensorlib.add(a, 1, out=tensorlib.empty(3, device=device))
    assert out.tolist() == [1.0, 2.0, 3.0]
    if device != "cpu":
        with pytest.raises(RuntimeError, match="device"):
            tensorlib.add(_x(device, 3), 1, out=tensorlib.empty(3))


def test_methods_take_no_out():
    x = tensorlib.ones(2)
    with pytest.raises(TypeError):
        x.add(x, out=tensorlib.empty(2))


def test_resize_method_keeps_storage_when_large_enough(device):
    x = _x(device, 6)
    storage = x._storage
    x.resize_(2, 2)
    assert x.shape == (2, 2) and x._storage is storage and x.tolist() == [[0, 1], [2, 3]]
    x.resize_(10)
    assert x.shape == (10,)


@pytest.mark.parametrize("name", ["mm", "matmul"])
def test_matrix_products_write_out_directly_or_through_the_copy(device, name):
    """The GEMM writes a ready out itself; an out that is a view, an operand, of another dtype
    or shape still gets PyTorch's result or error (the compute-then-copy path)."""
    fn = getattr(tensorlib, name)
    rng = np.random.default_rng(0)
    an, bn = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    a = tensorlib.tensor(an, dtype=tensorlib.float64, device=device)
    b = tensorlib.tensor(bn, dtype=tensorlib.float64, device=device)
    out = tensorlib.empty(5, 3, dtype=tensorlib.float64, device=device)
    from tensorlib._C.dispatch import has_kernel
    from tensorlib.ops import _out
    assert _out._product_into(out, a, b) == has_kernel("mm", out._device)   # a backend's mm
    assert not _out._product_into(out.t(), b.t(), a.t())
    version = out._version
    assert fn(a, b, out=out) is out and out._version > version
    np.testing.assert_allclose(out.cpu().numpy(), an @ bn, rtol=1e-12)
    strided = tensorlib.zeros(3, 5, dtype=tensorlib.float64, device=device).t()   # not contiguous
    fn(a, b, out=strided)
    np.testing.assert_allclose(strided.cpu().numpy(), an @ bn, rtol=1e-12)
    square = tensorlib.tensor(rng.standard_normal((4, 4)), dtype=tensorlib.float64, device=device)
    expected = square.cpu().numpy() @ square.cpu().numpy()
    assert not _out._product_into(square, square, square)
    fn(square, square, out=square)                                        # out is an operand
    np.testing.assert_allclose(square.cpu().numpy(), expected, rtol=1e-12)
    with pytest.raises(RuntimeError, match="dtype"):
        fn(a, b, out=tensorlib.empty(5, 3, device=device))                # float32 out
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        fn(a, a, out=out)
    leaf = a.clone().requires_grad_()
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        fn(leaf, b, out=out)
