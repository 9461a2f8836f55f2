"""nn.utils.parametrize against PyTorch: the parametrized class and its name, state_dict
keys, values and gradients through a parametrization, right_inverse on registration and on
assignment, stacking, cached(), tensors parametrized by a sequence, removal (leaving the
parametrized value or the original), PyTorch's errors; on every device."""
import copy

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
from tensorlib.nn.utils import parametrize

torch = pytest.importorskip("torch")
tparametrize = torch.nn.utils.parametrize

RNG = np.random.default_rng(5)


def npy(t):
    return t.detach().cpu().numpy()


def symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def scaled(lib, factor):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * factor

        def right_inverse(self, A):
            return A / factor
    return Scale()


def split_sum(lib):
    class SplitSum(lib.nn.Module):
        def forward(self, A, B):
            return A + B

        def right_inverse(self, X):
            return X * 0.25, X * 0.75
    return SplitSum()


def pair(device):
    torch.manual_seed(0)
    tm = torch.nn.Linear(3, 3).double()
    m = nn.Linear(3, 3).double()
    m.load_state_dict({k: tensorlib.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, m.to(device)


def test_register_matches_torch(device):
    tm, m = pair(device)
    original = m.weight
    tparametrize.register_parametrization(tm, "weight", symmetric(torch))
    assert parametrize.register_parametrization(m, "weight", symmetric(tensorlib)) is m
    assert type(m).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert isinstance(m, nn.Linear)
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert list(m.state_dict()) == list(tm.state_dict())
    assert m.parametrizations.weight.original is original   # the same Parameter object
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in tm.named_parameters()]
    np.testing.assert_allclose(npy(m.weight), tm.weight.detach().numpy(), rtol=1e-12)
    x = RNG.standard_normal((2, 3))
    (tm(torch.tensor(x)) ** 2).sum().backward()
    (m(tensorlib.tensor(x, device=device)) ** 2).sum().backward()
    np.testing.assert_allclose(npy(m.parametrizations.weight.original.grad),
                               tm.parametrizations.weight.original.grad.numpy(), rtol=1e-10)
    # assignment goes through right_inverse
    value = RNG.standard_normal((3, 3))
    value = value + value.T
    tm.weight = torch.tensor(value)
    m.weight = tensorlib.tensor(value, device=device)
    np.testing.assert_allclose(npy(m.parametrizations.weight.original),
                               tm.parametrizations.weight.original.detach().numpy())
    np.testing.assert_allclose(npy(m.weight), value)


def test_stacked_and_cached(device):
    tm, m = pair(device)
    for lib, mod in ((torch, tm), (tensorlib, m)):
        lib.nn.utils.parametrize.register_parametrization(mod, "weight", symmetric(lib))
        lib.nn.utils.parametrize.register_parametrization(mod, "weight", scaled(lib, 3.0))
    assert len(m.parametrizations.weight) == 2
    np.testing.assert_allclose(npy(m.weight), tm.weight.detach().numpy(), rtol=1e-12)
    assert m.weight is not m.weight
    with parametrize.cached():
        first = m.weight
        assert m.weight is first
        with parametrize.cached():
            assert m.weight is first
        assert m.weight is first
    assert m.weight is not first


def test_sequence_parametrization_and_remove(device):
    tm, m = pair(device)
    tparametrize.register_parametrization(tm, "weight", split_sum(torch))
    parametrize.register_parametrization(m, "weight", split_sum(tensorlib))
    assert list(m.state_dict()) == list(tm.state_dict())
    assert m.parametrizations.weight.ntensors == 2
    np.testing.assert_allclose(npy(m.parametrizations.weight.original1),
                               tm.parametrizations.weight.original1.detach().numpy())
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "weight")
    tparametrize.remove_parametrizations(tm, "weight")
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert list(m.state_dict()) == list(tm.state_dict())
    assert isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(npy(m.weight), tm.weight.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_leaves_value_or_original(leave):
    tm, m = pair("cpu")
    for lib, mod in ((torch, tm), (tensorlib, m)):
        lib.nn.utils.parametrize.register_parametrization(mod, "weight", scaled(lib, 2.0))
    original = m.parametrizations.weight.original
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
    tparametrize.remove_parametrizations(tm, "weight", leave_parametrized=leave)
    assert m.weight is original
    np.testing.assert_allclose(npy(m.weight), tm.weight.detach().numpy(), rtol=1e-12)


def test_buffers_deepcopy_and_transfer():
    m = nn.BatchNorm1d(3)
    parametrize.register_parametrization(m, "running_var", scaled(tensorlib, 2.0))
    assert "parametrizations.running_var.original" in m.state_dict()
    assert "parametrizations.running_var.original" not in dict(m.named_parameters())
    lin = nn.Linear(3, 3)
    parametrize.register_parametrization(lin, "weight", symmetric(tensorlib))
    clone = copy.deepcopy(lin)
    assert type(clone) is type(lin)
    np.testing.assert_array_equal(npy(clone.weight), npy(lin.weight))
    other = parametrize.transfer_parametrizations_and_params(lin, nn.Linear(3, 3))
    assert parametrize.is_parametrized(other, "weight")
    assert other.parametrizations.weight.original is lin.parametrizations.weight.original
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        lin.__getstate__()


def test_errors_match_torch():
    class ChangesShape(nn.Module):
        def forward(self, X):
            return X[:1]

    class TChangesShape(torch.nn.Module):
        def forward(self, X):
            return X[:1]

    for lib, mod, bad in ((torch, torch.nn.Linear(3, 3), TChangesShape()),
                          (tensorlib, nn.Linear(3, 3), ChangesShape())):
        with pytest.raises(ValueError, match="may not change the shape of the tensor"):
            lib.nn.utils.parametrize.register_parametrization(mod, "weight", bad)
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                             "parametrized element with name 'nope'"):
            lib.nn.utils.parametrize.register_parametrization(mod, "nope", bad)
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            lib.nn.utils.parametrize.remove_parametrizations(mod, "weight")
    m = nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", ChangesShape(), unsafe=True)
    assert m.weight.shape == (1, 3)
    with pytest.raises(RuntimeError, match="ChangesShape does not implement right_inverse"):
        m.weight = tensorlib.zeros(1, 3)
    assert parametrize.__all__ == tparametrize.__all__
