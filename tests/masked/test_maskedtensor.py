"""MaskedTensor against torch.masked's prototype on the same data and mask: repr, elementwise
ops, reductions (with and without dim), to_tensor, errors and autograd, on every test
device."""
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.masked import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor

torch = pytest.importorskip("torch")

DATA = np.array([[1.5, -2.0, 3.0, 0.5], [4.0, 5.0, -6.0, 2.0], [0.25, 1.0, 2.0, -1.0]])
MASK = np.array([[True, False, True, True], [False, False, True, False],
                 [True, True, False, False]])


@pytest.fixture(autouse=True)
def _quiet():
    """Both prototypes warn on construction."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _pair(device, data=DATA, mask=MASK):
    ours = masked_tensor(tl.tensor(data, device=device), tl.tensor(mask, device=device))
    theirs = torch.masked.masked_tensor(torch.tensor(data), torch.tensor(mask))
    return ours, theirs


def _same(ours, theirs):
    assert is_masked_tensor(ours)
    assert repr(ours) == repr(theirs)
    mask = theirs.get_mask().numpy()
    np.testing.assert_array_equal(ours.get_mask().cpu().numpy(), mask)
    np.testing.assert_allclose(ours.get_data().detach().cpu().numpy()[mask],
                               theirs.get_data().detach().numpy()[mask], rtol=1e-12)


CALLS = {
    "exp": lambda L, m: L.exp(m),
    "neg": lambda L, m: -m,
    "abs_method": lambda L, m: m.abs(),
    "pow": lambda L, m: m ** 2,
    "add_self": lambda L, m: m + m,
    "mul_scalar": lambda L, m: 3 * m,
    "div_tensor": lambda L, m: m / m.get_data(),
    "sub_fn": lambda L, m: L.sub(m, m.get_data()),
    "gt": lambda L, m: m > 1.0,
    "sum": lambda L, m: m.sum(),
    "sum_dim": lambda L, m: m.sum(0),
    "sum_keepdim": lambda L, m: L.sum(m, 1, keepdim=True),
    "sum_dims": lambda L, m: m.sum(dim=(0, 1)),
    "mean": lambda L, m: m.mean(),
    "mean_dim": lambda L, m: m.mean(1),
    "amax": lambda L, m: m.amax(1),
    "amin": lambda L, m: m.amin(),
    "argmax": lambda L, m: m.argmax(1),
    "argmin": lambda L, m: m.argmin(),
    "prod": lambda L, m: m.prod(0),
    "var": lambda L, m: m.var(1),
    "std": lambda L, m: m.std(),
    "index": lambda L, m: m[1],
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_matches_torch(device, name):
    ours, theirs = _pair(device)
    _same(CALLS[name](tl, ours), CALLS[name](torch, theirs))


def test_all_and_to_tensor(device):
    ours, theirs = _pair(device, DATA > 0, MASK)
    _same(ours.all(), theirs.all())
    _same(ours.all(1), theirs.all(1))
    ours, theirs = _pair(device)
    np.testing.assert_allclose(ours.to_tensor(-7.0).cpu().numpy(), theirs.to_tensor(-7.0))
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dim() == 2


def test_scalar_repr():
    ours = masked_tensor(tl.tensor(3.0), tl.tensor(False))
    theirs = torch.masked.masked_tensor(torch.tensor(3.0), torch.tensor(False))
    assert repr(ours) == repr(theirs) == "MaskedTensor(--, False)"


def test_errors():
    data, mask = tl.tensor(DATA), tl.tensor(MASK)
    with pytest.raises(TypeError, match="data must be a Tensor"):
        masked_tensor(DATA, mask)
    with pytest.raises(TypeError, match="mask must have dtype bool"):
        masked_tensor(data, mask.int())
    with pytest.raises(ValueError, match="dim"):
        masked_tensor(data, mask[0])
    with pytest.raises(ValueError, match="size"):
        masked_tensor(data, mask[:2])
    with pytest.raises(ValueError, match="Input masks must match"):
        masked_tensor(data, mask) + masked_tensor(data, ~mask)
    with pytest.warns(UserWarning, match="prototype"):
        MaskedTensor(data, mask)
    assert not isinstance(masked_tensor(data, mask), tl.Tensor)
    assert not is_masked_tensor(data)


def test_leaf_gradient(device):
    mask = tl.tensor(MASK, device=device)
    ours = masked_tensor(tl.tensor(DATA, device=device), mask, requires_grad=True)
    (ours * ours).sum().backward()
    theirs = torch.masked.masked_tensor(torch.tensor(DATA), torch.tensor(MASK),
                                        requires_grad=True)
    (theirs * theirs).sum().backward()
    _same(ours.grad, theirs.grad)


def test_gradient_through_get_data_and_as_masked_tensor(device):
    x = tl.tensor(DATA, device=device, requires_grad=True)
    mt = as_masked_tensor(x * 2, tl.tensor(MASK, device=device))
    mt.exp().sum().get_data().backward()
    expected = np.where(MASK, 2 * np.exp(2 * DATA), 0.0)
    np.testing.assert_allclose(x.grad.cpu().numpy(), expected, rtol=1e-6)
