"""index_reduce (+ in-place, include_self), put (+ accumulate, in-place) and segment_reduce
against torch: values, gradients, errors, on every test device."""
import warnings

import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # torch: "index_reduce() is in beta"
        yield


def _both(device, array, grad=False):
    return (tensorlib.tensor(array, device=device, requires_grad=grad),
            torch.tensor(array, requires_grad=grad))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_reduce(device, reduce, include_self, dim):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5))
    n = 6
    src = rng.standard_normal((n, 5) if dim == 0 else (4, n))
    index = rng.integers(0, x.shape[dim], n)
    (ox, tx), (os_, ts) = _both(device, x, True), _both(device, src, True)
    ours = tensorlib.index_reduce(ox, dim, tensorlib.tensor(index, device=device), os_, reduce,
                                  include_self=include_self)
    want = torch.index_reduce(tx, dim, torch.tensor(index), ts, reduce, include_self=include_self)
    np.testing.assert_allclose(ours.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-10)
    (ours * ours).sum().backward()
    (want * want).sum().backward()
    np.testing.assert_allclose(ox.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(os_.grad.cpu().numpy(), ts.grad.numpy(), rtol=1e-8, atol=1e-12)
    y = tensorlib.tensor(x, device=device)
    y.index_reduce_(dim, tensorlib.tensor(index, device=device),
                    tensorlib.tensor(src, device=device), reduce, include_self=include_self)
    np.testing.assert_allclose(y.cpu().numpy(), want.detach().numpy(), rtol=1e-10)


def test_index_reduce_errors():
    for m in (tensorlib, torch):
        with pytest.raises(RuntimeError, match="Expected reduce to be one of"):
            m.ones(3).index_reduce(0, m.tensor([0]), m.ones(1), "sum")


@pytest.mark.parametrize("accumulate", [True, False])
def test_put(device, accumulate):
    x = np.arange(12.0).reshape(3, 4)
    index = [0, -1, 5, 0] if accumulate else [0, -1, 5]
    src = np.arange(len(index), dtype=np.float64) + 10
    (ox, tx), (os_, ts) = _both(device, x, True), _both(device, src, True)
    ours = ox.t().put(tensorlib.tensor(index, device=device), os_, accumulate)
    want = tx.t().put(torch.tensor(index), ts, accumulate)
    np.testing.assert_array_equal(ours.detach().cpu().numpy(), want.detach().numpy())
    (ours * ours).sum().backward()
    (want * want).sum().backward()
    np.testing.assert_allclose(ox.grad.cpu().numpy(), tx.grad.numpy())
    np.testing.assert_allclose(os_.grad.cpu().numpy(), ts.grad.numpy())
    y = tensorlib.tensor(x, device=device)
    assert y.put_(tensorlib.tensor(index, device=device), tensorlib.tensor(src, device=device),
                  accumulate) is y
    np.testing.assert_array_equal(y.cpu().numpy(),
                                  torch.tensor(x).put_(torch.tensor(index), torch.tensor(src),
                                                       accumulate).numpy())


def test_put_errors():
    for m in (tensorlib, torch):
        with pytest.raises(IndexError, match="out of range"):
            m.ones(2, 3).put(m.tensor([6]), m.tensor([1.0]))
        with pytest.raises(IndexError, match="same number of elements"):
            m.ones(2, 3).put(m.tensor([1, 2]), m.tensor([1.0]))


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, 1.5])
def test_segment_reduce(device, reduce, initial):
    data = np.arange(1.0, 13.0).reshape(6, 2) / 3
    lengths = [2, 0, 3, 1]
    (od, td) = _both(device, data, True)
    ours = tensorlib.segment_reduce(od, reduce, lengths=tensorlib.tensor(lengths, device=device),
                                    initial=initial)
    want = torch.segment_reduce(td, reduce, lengths=torch.tensor(lengths), initial=initial)
    np.testing.assert_allclose(ours.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-12)
    offsets = tensorlib.tensor([0, 2, 2, 5, 6], device=device)
    again = tensorlib.segment_reduce(od, reduce, offsets=offsets, initial=initial)
    np.testing.assert_allclose(again.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-12)
    finite = np.isfinite(want.detach().numpy())
    weights = np.where(finite, 1.0, 0.0)
    (ours.nan_to_num(0, 0, 0) * tensorlib.tensor(weights, device=device)).sum().backward()
    (want.nan_to_num(0, 0, 0) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(od.grad.cpu().numpy(), td.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_private_segment_reduce_takes_the_a_spellings(device, reduce):
    """torch._segment_reduce (PyG's segment()) is segment_reduce; amax/amin are max/min."""
    data = np.arange(1.0, 13.0).reshape(6, 2) / 3
    od, td = _both(device, data)
    offsets = [0, 0, 2, 5, 6]
    ours = tensorlib._segment_reduce(od, reduce, offsets=tensorlib.tensor(offsets, device=device))
    want = torch._segment_reduce(td, reduce, offsets=torch.tensor(offsets))
    np.testing.assert_array_equal(ours.cpu().numpy(), want.numpy())


def test_segment_reduce_errors():
    for m in (tensorlib, torch):
        with pytest.raises(RuntimeError, match="must be either sum, prod, mean, amax or amin, "
                                               "got foo"):
            m.segment_reduce(m.ones(3), "foo", lengths=m.tensor([3]))
        with pytest.raises(RuntimeError, match="sum to data.size"):
            m.segment_reduce(m.ones(3), "sum", lengths=m.tensor([1, 1]))
        with pytest.raises(RuntimeError):
            m.segment_reduce(m.ones(3), "sum")
