"""The eager fast paths of the matrix products (issue 16) against torch: matmul's direct `mm`
kernel for matrices, addmm / F.linear as one GEMM onto the broadcast input, and split/chunk
recorded as one node whose backward is a cat."""
import numpy as np
import pytest

import tensorlib as tl
from tests.ops.layouts import LAYOUTS, make

torch = pytest.importorskip("torch")
rng = np.random.default_rng(16)


def _t(x):
    return torch.from_numpy(np.ascontiguousarray(x.detach().cpu().numpy()))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("b_shape", [(5, 3), (5,)])
def test_matrix_product_layouts_dtypes(layout, dtype, b_shape, device):
    if device.startswith("opencl") and dtype in ("float64", "float16"):
        pytest.skip("PoCL's double/half products are not what this tests")
    a = make(rng.integers(-3, 4, (4, 5)).astype(dtype), layout, device)
    b = tl.tensor(rng.integers(-3, 4, b_shape).astype(dtype), device=device)
    got = a @ b
    expected = _t(a) @ _t(b)
    assert tuple(got.shape) == tuple(expected.shape) and str(got.dtype)[10:] == dtype
    np.testing.assert_allclose(got.cpu().numpy().astype(np.float64),
                               expected.numpy().astype(np.float64), rtol=1e-3)


def test_matrix_product_errors_unchanged():
    with pytest.raises(RuntimeError, match=r"\(2x3 and 4x5\)"):
        tl.ones(2, 3) @ tl.ones(4, 5)
    with pytest.raises(RuntimeError, match="same dtype"):
        tl.ones(2, 3) @ tl.ones(3, 2, dtype=tl.float64)
    assert (tl.ones(2, 0) @ tl.ones(0, 3)).tolist() == [[0.0] * 3] * 2


@pytest.mark.parametrize("input_shape", [(3,), (1, 3), (2, 1), (2, 3), ()])
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2), (-1, 0)])
def test_addmm_matches_torch(input_shape, beta, alpha, device):
    i = tl.tensor(rng.standard_normal(input_shape), dtype=tl.float32, device=device)
    a = make(rng.standard_normal((2, 4)).astype(np.float32), "transposed", device)
    b = tl.tensor(rng.standard_normal((4, 3)), dtype=tl.float32, device=device)
    for x in (i, a, b):
        x.requires_grad_()
    got = tl.addmm(i, a, b, beta=beta, alpha=alpha)
    ti, ta, tb = (_t(x).requires_grad_() for x in (i, a, b))
    expected = torch.addmm(ti, ta, tb, beta=beta, alpha=alpha)
    np.testing.assert_allclose(got.detach().cpu().numpy(), expected.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    weights = rng.standard_normal(tuple(expected.shape)).astype(np.float32)
    (got * tl.tensor(weights, device=device)).sum().backward()
    (expected * torch.from_numpy(weights)).sum().backward()
    for mine, theirs in ((i, ti), (a, ta), (b, tb)):
        np.testing.assert_allclose(mine.grad.cpu().numpy(), theirs.grad.numpy(), rtol=1e-4,
                                   atol=1e-5)


def test_addmm_beta_zero_ignores_nan_and_checks_shapes():
    nan = tl.full((2, 3), float("nan"))
    assert not tl.addmm(nan, tl.ones(2, 4), tl.ones(4, 3), beta=0).isnan().any()
    with pytest.raises(RuntimeError, match="expanded size"):
        tl.addmm(tl.ones(4), tl.ones(2, 4), tl.ones(4, 3))
    got = tl.addmm(tl.ones(2, 2, dtype=tl.int64), tl.ones(2, 3, dtype=tl.int64),
                   tl.ones(3, 2, dtype=tl.int64))
    assert got.dtype is tl.int64 and got.tolist() == [[4, 4], [4, 4]]


def test_linear_with_bias_is_one_node_and_matches_torch(device):
    x = tl.tensor(rng.standard_normal((5, 4)), dtype=tl.float32, device=device,
                  requires_grad=True)
    w = tl.tensor(rng.standard_normal((3, 4)), dtype=tl.float32, device=device,
                  requires_grad=True)
    bias = tl.tensor(rng.standard_normal(3), dtype=tl.float32, device=device,
                     requires_grad=True)
    out = tl.nn.functional.linear(x, w, bias)
    assert type(out.grad_fn).__name__ == "LinearBackward0"
    tx, tw, tbias = (_t(v).requires_grad_() for v in (x, w, bias))
    expected = torch.nn.functional.linear(tx, tw, tbias)
    np.testing.assert_allclose(out.detach().cpu().numpy(), expected.detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    out.square().sum().backward()
    expected.square().sum().backward()
    for mine, theirs in ((x, tx), (w, tw), (bias, tbias)):
        np.testing.assert_allclose(mine.grad.cpu().numpy(), theirs.grad.numpy(), rtol=1e-4,
                                   atol=1e-4)


@pytest.mark.parametrize("in_features,out_features", [(0, 3), (3, 0), (0, 0)])
def test_linear_with_an_empty_feature_dim_gives_torch_gradients(in_features, out_features,
                                                                 device):
    """A 0-size feature dim: the output is the bias (or empty) and every gradient has its
    parameter's shape, as torch's; reshape(-1, 0) would be ambiguous in the formula."""
    x = tl.ones((2, 4, in_features), device=device, requires_grad=True)
    w = tl.ones((out_features, in_features), device=device, requires_grad=True)
    bias = tl.ones(out_features, device=device, requires_grad=True)
    out = tl.nn.functional.linear(x, w, bias)
    out.sum().backward()
    tx, tw, tbias = (torch.ones(tuple(v.shape), requires_grad=True) for v in (x, w, bias))
    expected = torch.nn.functional.linear(tx, tw, tbias)
    expected.sum().backward()
    assert tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(out.detach().cpu().numpy(), expected.detach().numpy())
    for mine, theirs in ((x, tx), (w, tw), (bias, tbias)):
        assert tuple(mine.grad.shape) == tuple(theirs.grad.shape)
        np.testing.assert_array_equal(mine.grad.cpu().numpy(), theirs.grad.numpy())


def test_split_records_one_node_and_cats_its_gradient(device):
    x = tl.tensor(rng.standard_normal((3, 10)), dtype=tl.float32, device=device,
                  requires_grad=True)
    pieces = x.split(4, 1)
    assert len({id(p.grad_fn) for p in pieces}) == 1
    assert type(pieces[0].grad_fn).__name__ == "SplitWithSizesBackward0"
    assert [p._output_nr for p in pieces] == [0, 1, 2]
    (pieces[1] * 2).sum().backward()            # pieces 0 and 2 get no gradient
    expected = np.zeros((3, 10), np.float32)
    expected[:, 4:8] = 2
    np.testing.assert_array_equal(x.grad.cpu().numpy(), expected)
    x.grad = None
    a, b = x.chunk(2, 1)
    (a.sum() + 3 * b.sum()).backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy()[0], [1] * 5 + [3] * 5)
