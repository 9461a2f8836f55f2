"""select_kernels (branch-free where, relu and its backward) against numpy, bit for bit, on every dtype
width and operand layout they take; where refuses (False) the layouts it does not take, relu
takes every dtype and layout (numpy beyond its loops)."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu import select_kernels

DTYPES = [np.bool_, np.uint8, np.int16, np.float16, np.float32, np.int32, np.float64, np.int64]


@pytest.mark.parametrize("n", [0, 7, 1 << 17])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_full,b_full", [(True, True), (True, False), (False, True),
                                           (False, False)])
def test_where_matches_numpy(n, dtype, a_full, b_full):
    rng = np.random.default_rng(n)
    cond = rng.random(n) < 0.5
    a = (rng.standard_normal(n) * 100).astype(dtype) if a_full else np.array(3, dtype)
    b = (rng.standard_normal(n) * 100).astype(dtype) if b_full else np.array(1, dtype)
    out = tl.empty((n,), dtype=tl.from_numpy(np.zeros(1, dtype)).dtype)
    ta, tb = tl.from_numpy(a), tl.from_numpy(b)
    if not a_full:
        ta = ta.expand(n)
    if not b_full:
        tb = tb.expand(n)
    assert select_kernels.where(out, tl.from_numpy(cond), ta, tb)
    expected = np.where(cond, a, b)
    assert np.array_equal(out.numpy().view(np.uint8), expected.view(np.uint8))


def test_where_refuses_strided_and_mixed_dtypes():
    cond = tl.from_numpy(np.ones(10, bool))
    a = tl.from_numpy(np.arange(20.0))[::2]
    b = tl.zeros(10, dtype=tl.float64)
    out = tl.empty((10,), dtype=tl.float64)
    assert select_kernels.where(out, cond, a, b) is False
    assert select_kernels.where(out, cond, b.float(), b) is False
    # the tensor op still answers through the general kernel
    assert tl.where(cond, a, b).tolist() == list(np.arange(0.0, 20.0, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [5, 1 << 17])
def test_relu_matches_torch_semantics(dtype, n):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(dtype)
    x[:5] = [np.nan, -np.inf, np.inf, -0.0, 0.0]
    out = tl.empty((n,), dtype=tl.float32 if dtype == np.float32 else tl.float64)
    assert select_kernels.relu(out, tl.from_numpy(x))
    expected = np.maximum(x, 0)                 # numpy keeps NaN, as torch does
    np.testing.assert_array_equal(out.numpy(), expected)
    assert tl.relu(tl.from_numpy(x)[::2]).numpy().tolist() == pytest.approx(
        expected[::2].tolist(), nan_ok=True)    # strided input: the general path


@pytest.mark.parametrize("case", ["channels_last", "strided", "int64", "float16", "int8"])
def test_relu_kernel_takes_every_layout_and_dtype(case):
    """Its loop for dense float32/float64 in one order (channels-last pairs with a
    channels-last output), numpy for the rest: always written, NaN kept, ints too."""
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((2, 3, 4, 5)) * 50).astype(np.float32)
    x.flat[:3] = [np.nan, -0.0, np.inf]
    t = tl.from_numpy(x)
    if case == "channels_last":
        t = t.contiguous(memory_format=tl.channels_last)
        out = tl.empty_like(t)
    elif case == "strided":
        t = t[:, :, ::2]
        out = tl.empty(t.shape)
    else:
        finite = np.clip(np.nan_to_num(x, posinf=100.0), -100, 100)
        t = tl.from_numpy(finite).to(getattr(tl, case))
        out = tl.empty(t.shape, dtype=t.dtype)
    assert select_kernels.relu(out, t) is True
    ref = t.numpy()
    np.testing.assert_array_equal(out.numpy(), np.maximum(ref, np.zeros((), ref.dtype)))
    got = tl.relu(t)
    assert got.is_contiguous(memory_format=tl.channels_last) == (case == "channels_last")
    np.testing.assert_array_equal(got.numpy(), out.numpy())


def test_relu_records_one_node_and_a_declining_kernel_falls_back(monkeypatch):
    x = tl.tensor([-1.0, 2.0, float("nan")], requires_grad=True)
    y = tl.relu(x)
    assert type(y.grad_fn).__name__ == "ReluBackward0"
    y.sum().backward()
    assert x.grad.tolist()[:2] == [0.0, 1.0]
    kernels = dict(x._device._kernels)
    monkeypatch.setitem(x._device._kernels, "relu", lambda out, x: False)
    z = tl.relu(x)
    assert type(z.grad_fn).__name__ == "ReluBackward0"
    assert z.detach().tolist()[:2] == [0.0, 2.0] and z.detach().isnan().tolist()[2]
    assert kernels["relu"] is select_kernels.relu


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [5, 1 << 17])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "broadcast_grad"])
def test_relu_backward_matches_torch(dtype, n, layout):
    """The gradient of relu as torch's threshold_backward: 0 where the output is <= 0 (-0.0
    included), the incoming gradient elsewhere, NaN outputs included; every layout."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal(2 * n).astype(dtype)
    x[:5] = [np.nan, -np.inf, np.inf, -0.0, 0.0]
    g = rng.standard_normal(2 * n).astype(dtype)

    def grad_of(lib):
        xs = lib.tensor(x)[::2] if layout == "strided" else lib.tensor(x[:n])
        xs.requires_grad_(True)
        gs = lib.tensor(g[:1]).expand(n) if layout == "broadcast_grad" else lib.tensor(g[:n])
        lib.relu(xs).backward(gs)
        return xs.grad.numpy()
    np.testing.assert_array_equal(grad_of(tl), grad_of(torch))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows,cols", [(0, 4), (3, 5), (512, 256)])
def test_relu_backward_kernel_takes_a_broadcast_gradient(dtype, rows, cols):
    """A gradient that is one value broadcast (strides all 0, as `y.sum()`'s) is read as that
    value; one broadcast along a single dim goes the general way; both as numpy's select."""
    rng = np.random.default_rng(3)
    y = np.maximum(rng.standard_normal((rows, cols)), 0).astype(dtype)
    if y.size:
        y.flat[:3] = [np.nan, -0.0, 0.0]
    for grad, want in ((tl.tensor(np.array(2.5, dtype)).expand(rows, cols),
                        np.full((rows, cols), 2.5, dtype)),
                       (tl.tensor(np.arange(cols, dtype=dtype)).expand(rows, cols),
                        np.broadcast_to(np.arange(cols, dtype=dtype), (rows, cols)))):
        out = tl.empty((rows, cols), dtype=grad.dtype)
        select_kernels.relu_backward(out, grad, tl.from_numpy(y))
        np.testing.assert_array_equal(out.numpy(), np.where(y <= 0, 0, want))


def test_relu_backward_gradgrad():
    """With create_graph the formula stays in tensor ops (differentiable again)."""
    x = tl.tensor(np.array([-1.5, 0.5, 2.0, -0.25]), requires_grad=True)
    assert tl.autograd.gradgradcheck(tl.relu, (x,))
