"""The threaded fill (fill_kernels) behind fill_, zero_, zeros and full: every dtype and
value as numpy's fill writes them, sizes around the threshold and around each thread's
share, and the outputs it hands back to numpy (strided, small, 16-byte elements)."""
import numpy as np
import pytest

import tensorlib
from tensorlib_cpu import fastreduce, fill_kernels

BIG = fill_kernels.PARALLEL_MIN_BYTES


@pytest.fixture
def three_threads():
    """Regions on exactly 3 threads (shares that do not divide the sizes below), whatever
    the machine's load."""
    configured = tensorlib.get_num_threads()
    tensorlib.set_num_threads(3)
    fastreduce.pin_threads(True)
    yield
    fastreduce.pin_threads(False)
    tensorlib.set_num_threads(configured)


CASES = [("bool", True), ("uint8", 250), ("int8", -7), ("int16", -12345), ("float16", 0.1),
         ("bfloat16", -3.5), ("int32", 2 ** 31 - 1), ("float32", 0.1), ("float32", -0.0),
         ("float32", float("nan")), ("float32", float("-inf")), ("int64", -(2 ** 62) - 3),
         ("float64", 1 / 3), ("complex64", 1.5 - 2j)]


@pytest.mark.parametrize("dtype,value", CASES)
@pytest.mark.parametrize("extra", [0, 1, 7])
def test_threaded_fill_writes_what_numpy_fill_writes(three_threads, dtype, value, extra):
    out = np.full(BIG // np.dtype(_np(dtype)).itemsize * 3 + extra, 1, _np(dtype))
    one = np.empty(1, out.dtype)
    one.fill(value)
    expected = np.empty_like(out)
    expected.fill(value)
    assert fill_kernels.fill(out, one)
    assert np.array_equal(out.view(np.uint8), expected.view(np.uint8))


def _np(dtype):
    if dtype == "bfloat16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return np.dtype(dtype)


def test_outputs_left_to_numpy(three_threads):
    one = np.zeros(1, np.float32)
    small = np.ones(BIG // 4 - 1, np.float32)
    strided = np.ones(BIG // 2, np.float32)[::2]
    readonly = np.ones(BIG, np.float32)
    readonly.flags.writeable = False
    wide = np.ones(BIG // 16, np.complex128)
    for out in (small, strided, readonly):
        assert not fill_kernels.fill(out, one)
        assert (out == 1).all()
    assert not fill_kernels.fill(wide, np.zeros(1, np.complex128))
    assert (wide == 1).all()


def test_value_must_be_one_element_of_the_dtype():
    out = np.ones(BIG, np.float32)
    with pytest.raises(ValueError, match="one element of float32"):
        fill_kernels.fill(out, np.zeros(1, np.float64))
    with pytest.raises(ValueError, match="got 2 of float32"):
        fill_kernels.fill(out, np.zeros(2, np.float32))
    assert (out == 1).all()


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "float16"])
def test_tensor_fills_through_the_threads(three_threads, dtype):
    shape = (513, BIG // 256 + 3)
    dt = getattr(tensorlib, dtype)
    x = tensorlib.empty(shape, dtype=dt)
    x.fill_(7)
    assert (x.numpy() == 7).all()
    x.zero_()
    assert (x.numpy() == 0).all()
    assert (tensorlib.full(shape, 3, dtype=dt).numpy() == 3).all()
    assert (tensorlib.zeros(shape, dtype=dt).numpy() == 0).all()
    # a transposed view is strided: numpy's fill, same values
    t = tensorlib.ones(shape, dtype=dt).t()
    t.fill_(2)
    assert (t.numpy() == 2).all()


def test_out_of_range_integers_wrap_as_before(three_threads):
    x = tensorlib.zeros(BIG, dtype=tensorlib.uint8)
    x.fill_(tensorlib.tensor(1000))            # a tensor's value is cast (PyTorch: 232)
    assert (x.numpy() == np.array(1000).astype(np.uint8)).all()
    with pytest.raises(RuntimeError, match="uint8_t without overflow"):
        x.fill_(1000)                          # a Python number is checked
    assert (x.numpy() == 232).all()
