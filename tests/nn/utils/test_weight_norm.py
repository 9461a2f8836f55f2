"""The hook-based nn.utils.weight_norm / spectral_norm against PyTorch: attribute names
(weight_g/weight_v, weight_orig/weight_u/weight_v), state_dict keys and metadata, values and
gradients with the same state, removal, PyTorch's errors and warning; on every device."""
import warnings

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(13)
TOL = dict(rtol=1e-9, atol=1e-12)


def npy(t):
    return t.detach().cpu().numpy()


def load(tm, m, device):
    m.load_state_dict({k: tensorlib.tensor(v.detach().numpy())
                       for k, v in tm.state_dict().items()})
    return m.to(device)


def step(tm, m, device, shape):
    x = RNG.standard_normal(shape)
    ty, y = tm(torch.tensor(x)), m(tensorlib.tensor(x, device=device))
    np.testing.assert_allclose(npy(y), ty.detach().numpy(), **TOL)
    (ty ** 2).sum().backward()
    (y ** 2).sum().backward()
    for name, p in tm.named_parameters():
        np.testing.assert_allclose(npy(getattr(m, name).grad), p.grad.numpy(), err_msg=name,
                                   **TOL)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm(device, dim):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tm = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 3, 2).double(), dim=dim)
    with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
        m = nn.utils.weight_norm(nn.Conv1d(2, 3, 2).double(), dim=dim)
    assert list(m.state_dict()) == list(tm.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert tuple(m.weight_g.shape) == tuple(tm.weight_g.shape)
    load(tm, m, device)
    step(tm, m, device, (2, 2, 5))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            nn.utils.weight_norm(m, dim=dim)
    nn.utils.remove_weight_norm(m)
    torch.nn.utils.remove_weight_norm(tm)
    assert list(m.state_dict()) == list(tm.state_dict())
    assert isinstance(m.weight, nn.Parameter) and not m._forward_pre_hooks
    np.testing.assert_allclose(npy(m.weight), tm.weight.detach().numpy(), **TOL)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(m)


@pytest.mark.parametrize("cls, args, shape", [("Linear", (3, 4), (2, 3)),
                                              ("ConvTranspose1d", (3, 2, 2), (2, 3, 4))])
def test_spectral_norm(device, cls, args, shape):
    torch.manual_seed(0)
    tm = torch.nn.utils.spectral_norm(getattr(torch.nn, cls)(*args).double())
    m = nn.utils.spectral_norm(getattr(nn, cls)(*args).double())
    assert list(m.state_dict()) == list(tm.state_dict()) == \
        ["bias", "weight_orig", "weight_u", "weight_v"]
    assert m.state_dict()._metadata == tm.state_dict()._metadata
    load(tm, m, device)
    step(tm, m, device, shape)
    np.testing.assert_allclose(npy(m.weight_u), tm.weight_u.numpy(), **TOL)
    tm.eval()
    m.eval()
    step(tm, m, device, shape)
    nn.utils.remove_spectral_norm(m)
    torch.nn.utils.remove_spectral_norm(tm)
    assert list(m.state_dict()) == list(tm.state_dict())
    assert not m._state_dict_hooks and not m._load_state_dict_pre_hooks
    np.testing.assert_allclose(npy(m.weight), tm.weight.detach().numpy(), **TOL)


def test_spectral_norm_errors_and_old_state_dict():
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    m = nn.utils.spectral_norm(nn.Linear(3, 4).double())
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(m)
    # a version-0 checkpoint (weight, weight_orig, weight_u; no metadata): v is solved for
    m(tensorlib.zeros(1, 3, dtype=tensorlib.float64))
    state = dict(m.state_dict())
    old = {"bias": state["bias"], "weight_orig": state["weight_orig"],
           "weight_u": state["weight_u"], "weight": m.weight.detach()}
    other = nn.utils.spectral_norm(nn.Linear(3, 4).double())
    other.load_state_dict(old)
    other.eval()
    m.eval()
    x = tensorlib.tensor(RNG.standard_normal((2, 3)))
    np.testing.assert_allclose(npy(other(x)), npy(m(x)), rtol=1e-6)
    with pytest.raises(ValueError, match="spectral_norm of 'bias' not found in"):
        nn.utils.remove_spectral_norm(m, "bias")
