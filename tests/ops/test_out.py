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
    assert _out._product_into(out, (a, b), {}) == has_kernel("mm", out._device)   # a backend's mm
    assert not _out._product_into(out.t(), (b.t(), a.t()), {})
    version = out._version
    assert fn(a, b, out=out) is out and out._version > version
    np.testing.assert_allclose(out.cpu().numpy(), an @ bn, rtol=1e-12)
    strided = tensorlib.zeros(3, 5, dtype=tensorlib.float64, device=device).t()   # not contiguous
    fn(a, b, out=strided)
    np.testing.assert_allclose(strided.cpu().numpy(), an @ bn, rtol=1e-12)
    square = tensorlib.tensor(rng.standard_normal((4, 4)), dtype=tensorlib.float64, device=device)
    expected = square.cpu().numpy() @ square.cpu().numpy()
    assert not _out._product_into(square, (square, square), {})
    fn(square, square, out=square)                                        # out is an operand
    np.testing.assert_allclose(square.cpu().numpy(), expected, rtol=1e-12)
    with pytest.raises(RuntimeError, match="dtype"):
        fn(a, b, out=tensorlib.empty(5, 3, device=device))                # float32 out
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        fn(a, a, out=out)
    leaf = a.clone().requires_grad_()
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        fn(leaf, b, out=out)


def _direct(name, out, *args, **kwargs):
    from tensorlib.ops import _out
    return _out._DIRECT[name](out, args, kwargs)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "exp", "tanh"])
def test_elementwise_ops_write_a_ready_out_directly(device, name):
    """A contiguous out of the result's shape and dtype, sharing no memory with the operands
    (or being one of them exactly), is written by the op's kernel; the values are the op's."""
    fn = getattr(tensorlib, name)
    rng = np.random.default_rng(1)
    an, bn = rng.uniform(0.5, 2, (3, 5)), rng.uniform(0.5, 2, (1, 5))
    a = tensorlib.tensor(an, dtype=tensorlib.float64, device=device)
    b = tensorlib.tensor(bn, dtype=tensorlib.float64, device=device)
    args = (a,) if name in ("exp", "tanh") else (a, b)
    want = fn(*args).cpu().numpy()
    out = tensorlib.empty(3, 5, dtype=tensorlib.float64, device=device)
    assert _direct(name, out, *args)
    version = out._version
    assert fn(*args, out=out) is out and out._version > version
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    same = a.clone()                                  # out is the first operand itself
    assert fn(*((same,) + args[1:]), out=same) is same
    np.testing.assert_array_equal(same.cpu().numpy(), want)


def test_elementwise_out_that_is_not_ready_takes_the_copy(device):
    """Any other out (strided, another dtype, overlapping an operand, a non-plain alpha or
    rounding mode, bool arithmetic) keeps PyTorch's result or error."""
    a = _x(device, 3, 4) + 1
    b = _x(device, 4) + 1
    strided = tensorlib.zeros(4, 3, device=device).t()
    assert not _direct("add", strided, a, b)
    tensorlib.add(a, b, out=strided)
    np.testing.assert_array_equal(strided.cpu().numpy(), (a + b).cpu().numpy())
    wide = tensorlib.empty(3, 4, dtype=tensorlib.float64, device=device)
    assert not _direct("mul", wide, a, b)
    tensorlib.mul(a, b, out=wide)
    np.testing.assert_array_equal(wide.cpu().numpy(), (a * b).cpu().numpy())
    row = a.clone()
    assert not _direct("add", row[0], row[1], b)         # a view of the same storage
    out = tensorlib.empty(3, 4, device=device)
    assert not _direct("add", out, a, b, alpha=2)
    tensorlib.add(a, b, alpha=2, out=out)
    np.testing.assert_array_equal(out.cpu().numpy(), (a + 2 * b).cpu().numpy())
    assert not _direct("div", out, a, b, rounding_mode="floor")
    tensorlib.div(a, b, rounding_mode="floor", out=out)
    np.testing.assert_array_equal(out.cpu().numpy(), np.floor(a.cpu().numpy() / b.cpu().numpy()))
    ints = tensorlib.arange(6, device=device).reshape(2, 3)
    floats = tensorlib.empty(2, 3, device=device)
    assert _direct("div", floats, ints, 4)               # integers divide into floats
    np.testing.assert_array_equal(floats.cpu().numpy(), np.arange(6).reshape(2, 3) / 4)
    flags = tensorlib.tensor([True, False], device=device)
    with pytest.raises(RuntimeError, match="Subtraction"):
        tensorlib.sub(flags, flags, out=tensorlib.empty(2, dtype=tensorlib.bool, device=device))


def test_out_written_directly_still_invalidates_saved_tensors(device):
    x = (_x(device, 4) + 1).requires_grad_()
    y = x.exp()                                          # exp saves its result
    with tensorlib.no_grad():
        tensorlib.mul(y, 2, out=y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_multinomial_writes_an_int64_out(device):
    """torch.multinomial(..., out=) (BoTorch's batched_multinomial passes out=None or a view):
    the draws of the call without out=, and PyTorch's words for an out of another dtype."""
    weights = tensorlib.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]], device=device)
    out = tensorlib.empty(0, dtype=tensorlib.int64, device=device)
    assert tensorlib.multinomial(weights, 2, replacement=True, out=out) is out
    assert out.tolist() == [[1, 1], [2, 2]]
    assert tensorlib.multinomial(weights, 1, out=None).tolist() == [[1], [2]]
    for dtype, name in ((tensorlib.int32, "Int"), (tensorlib.float32, "Float")):
        with pytest.raises(RuntimeError, match=f"multinomial expects Long tensor out, got: {name}"):
            tensorlib.multinomial(weights, 1, out=tensorlib.empty(0, dtype=dtype, device=device))
