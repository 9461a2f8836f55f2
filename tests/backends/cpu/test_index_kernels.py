"""The CPU gather/scatter_add/index_select kernels check their own bounds (checks_bounds):
results against torch for every dtype and for non-contiguous operands, and the out-of-range
errors exactly as the op-level check words them (the first bad index in row-major order)."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.backends.interface import IndexOutOfBounds
from tensorlib._C.device import canonical

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]


def _pair(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape) * 5
    t = torch.tensor(values).to(getattr(torch, dtype)) if dtype != "bool" else \
        torch.tensor(values > 0)
    if dtype.startswith("complex"):
        t = t + 1j * torch.tensor(rng.standard_normal(shape)).to(t.dtype)
    return tl.from_numpy(t.view(torch.int16).numpy()).view(getattr(tl, dtype)) \
        if dtype == "bfloat16" else tl.from_numpy(t.numpy()), t


def _same(ours, theirs):
    if theirs.dtype == torch.float16 and ours.numpy().shape == theirs.shape:
        # (a float16 sum rounds per add here, as numpy's add.at; torch's differs in the last
        # bit where several values meet)
        assert np.allclose(ours.numpy(), theirs.numpy(), rtol=2e-3, atol=1e-3)
    elif theirs.dtype == torch.bfloat16:
        assert ours.view(tl.int16).numpy().tolist() == theirs.view(torch.int16).tolist()
    else:
        assert np.array_equal(ours.numpy(), theirs.numpy())


def test_the_cpu_kernels_declare_their_checks():
    cpu = canonical("cpu")
    for op in ("gather", "scatter_add", "index_select"):
        assert cpu._kernels[op].checks_bounds


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_every_dtype_and_layout(dtype):
    x, tx = _pair(dtype, (6, 8))
    rng = np.random.default_rng(1)
    index = rng.integers(0, 6, (7, 5))
    i, ti = tl.tensor(index), torch.tensor(index)
    _same(x.t().gather(1, i), tx.t().gather(1, ti))                     # transposed input
    _same(x.gather(0, i[::2, 1:]), tx.gather(0, ti[::2, 1:]))            # strided index
    _same(x[:, ::2].gather(1, i.t()[:6, :3] % 4), tx[:, ::2].gather(1, ti.t()[:6, :3] % 4))
    _same(x[0].gather(0, i[0]), tx[0].gather(0, ti[0]))                  # 1-D


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "int64", "float16", "float32",
                                   "float64", "complex128"])
def test_scatter_add_every_dtype_and_layout(dtype):
    if dtype == "bool":
        pytest.skip("torch's scatter_add has no bool kernel on the CPU")
    x, tx = _pair(dtype, (5, 7))
    src, tsrc = _pair(dtype, (6, 9), seed=2)
    rng = np.random.default_rng(3)
    index = rng.integers(0, 5, (4, 7))                  # repeats: added in row-major order
    i, ti = tl.tensor(index), torch.tensor(index)
    _same(x.scatter_add(0, i, src), tx.scatter_add(0, ti, tsrc))        # src larger than index
    _same(x.scatter_add(0, i[:, ::2], src.t()[:4, :4]),
          tx.scatter_add(0, ti[:, ::2], tsrc.t()[:4, :4]))              # strided index and src
    _same(x.t().scatter_add(1, i.t(), src.t()[:7, :4]),
          tx.t().scatter_add(1, ti.t(), tsrc.t()[:7, :4]))


def test_scatter_add_keeps_negative_zero_and_nan():
    x = tl.tensor([-0.0, 1.0, float("nan")])
    out = x.scatter_add(0, tl.tensor([0, 1]), tl.tensor([-0.0, float("nan")]))
    assert np.signbit(out[0].item()) and np.isnan(out[1].item()) and np.isnan(out[2].item())


def test_index_select_strided_index():
    x, tx = _pair("float64", (6, 4))
    i = tl.tensor([5, 0, 3, 3, 1, 2])[::2]
    _same(x.index_select(0, i), tx.index_select(0, torch.tensor([5, 3, 1])))


@pytest.mark.parametrize("bad, first", [([[1, 9], [-1, 2]], 9), ([[1, 2], [-1, 9]], -1),
                                        ([[0, 7], [8, 1]], 7)])
def test_out_of_range_names_the_first_bad_index(bad, first):
    x = tl.zeros(2, 7)
    for call in (lambda i: x.gather(1, i), lambda i: x.scatter_add(1, i, x),
                 lambda i: tl.scatter_add(x, 1, i, x)):
        with pytest.raises(IndexOutOfBounds) as err:
            call(tl.tensor(bad))
        assert str(err.value) == f"index {first} is out of bounds for dimension 1 with size 7"
        assert isinstance(err.value, IndexError) and isinstance(err.value, RuntimeError)


def test_out_of_range_through_strided_and_int32_indices():
    x = tl.zeros(3, 4)
    index = tl.tensor([[0, 5, 1], [2, 1, 7]], dtype=tl.int32).t()    # column-major walk: 0 2 5
    with pytest.raises(IndexOutOfBounds, match="index 5 is out of bounds for dimension 0 "
                                                "with size 3"):
        x.gather(0, index)
    with pytest.raises(IndexOutOfBounds, match="index 4 is out of bounds for dimension 0 "
                                               "with size 3"):
        x.index_select(0, tl.tensor([0, 4, 9]))


def test_scatter_add_out_of_range_leaves_input_alone():
    x = tl.zeros(4)
    with pytest.raises(IndexError):
        x.scatter_add_(0, tl.tensor([1, 4]), tl.ones(2))
    assert x.tolist() == [0.0] * 4


def test_gradients_through_the_kernels():
    x = tl.randn(4, 5, dtype=tl.float64, requires_grad=True)
    index = tl.tensor([[0, 4, 4], [1, 1, 2]])
    assert tl.autograd.gradcheck(lambda t: t.gather(1, index), (x,))
    src = tl.randn(2, 3, dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(lambda a, b: a.scatter_add(1, index, b), (x, src))


def test_empty_output_still_checks_the_index():
    with pytest.raises(IndexOutOfBounds, match="index -1 is out of bounds for dimension 1 "
                                               "with size 3"):
        tl.zeros(0, 3).index_select(-1, tl.tensor([-1, -2]))
    empty = tl.zeros(0, 3).gather(1, tl.zeros(0, 1, dtype=tl.int64) + 3)  # no index: no check
    assert empty.shape == (0, 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 7, 6), (300, 260)])     # the second takes the threads
def test_index_select_every_dtype_dim_and_layout(dtype, shape):
    """Blocks by memcpy (contiguous inner dims), strided blocks, single items along the last
    dim; repeated and unordered indices; transposed and sliced inputs."""
    x, tx = _pair(dtype, shape)
    rng = np.random.default_rng(4)
    views = [(x, tx), (x.transpose(0, -1), tx.transpose(0, -1)), (x[..., 1::2], tx[..., 1::2])]
    for ours, theirs in views:
        for dim in range(theirs.dim()):
            index = rng.integers(0, theirs.shape[dim], 41)
            _same(ours.index_select(dim, tl.tensor(index)),
                  theirs.index_select(dim, torch.tensor(index)))


def test_index_select_gradient():
    x = tl.randn(6, 5, dtype=tl.float64, requires_grad=True)
    index = tl.tensor([4, 0, 4, 2])
    for dim in (0, 1):
        assert tl.autograd.gradcheck(lambda t: t.t().index_select(dim, index), (x,))


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("shape", [(6, 5, 4), (40, 2100)])       # the second takes the threads
def test_index_add_runs_match_torch(dtype, shape):
    """index_add (a scatter_add whose index varies along dim only: whole runs added) equals
    torch's, repeated indices added in order, into transposed and sliced outputs, from
    broadcast sources; int64 sums wrap."""
    x, tx = _pair(dtype, shape)
    rng = np.random.default_rng(6)
    for ours, theirs in ((x, tx), (x.transpose(0, -1), tx.transpose(0, -1)),
                         (x[..., ::2], tx[..., ::2])):
        for dim in range(theirs.dim()):
            index = rng.integers(0, theirs.shape[dim], 23)
            size = list(theirs.shape)
            size[dim] = 23
            src, tsrc = _pair(dtype, tuple(size), seed=dim + 7)
            got = ours.index_add(dim, tl.tensor(index), src)
            want = theirs.index_add(dim, torch.tensor(index), tsrc)
            if dtype == "float32":      # torch's vectorised adds may round a repeat differently
                assert np.allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-5)
            else:
                _same(got, want)
            one, tone = src.reshape(-1)[:1], tsrc.reshape(-1)[:1]
            got = ours.index_add(dim, tl.tensor(index), one.expand(*size))
            want = theirs.index_add(dim, torch.tensor(index), tone.expand(*size))
            assert np.allclose(got.numpy().astype(float), want.numpy().astype(float),
                               rtol=1e-6, atol=1e-4)
    big = tl.full((2, 3), 2 ** 62, dtype=tl.int64)
    wrapped = big.index_add(0, tl.tensor([0, 0, 0]), tl.full((3, 3), 2 ** 62, dtype=tl.int64))
    assert wrapped.tolist() == torch.full((2, 3), 2 ** 62).index_add(
        0, torch.tensor([0, 0, 0]), torch.full((3, 3), 2 ** 62)).tolist()
