"""nn.utils.parametrizations against PyTorch with the same state: weight_norm (dims 0, 1,
None, old-key loading), spectral_norm (power iteration in training, none in eval,
ConvTranspose's dim) and orthogonal (matrix_exp, cayley, householder; square, wide, tall;
with and without trivialization): state_dict keys, values, gradients, orthogonality and
PyTorch's errors; on every device."""
import warnings

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
from tensorlib.nn.utils import parametrizations

torch = pytest.importorskip("torch")
tparametrizations = torch.nn.utils.parametrizations

RNG = np.random.default_rng(9)
TOL = dict(rtol=1e-9, atol=1e-12)


def npy(t):
    return t.detach().cpu().numpy()


def load(tm, m, device):
    m.load_state_dict({k: tensorlib.tensor(v.detach().numpy())
                       for k, v in tm.state_dict().items()})
    return m.to(device)


def compare_step(tm, m, device, shape):
    """Forward, backward and every gradient, torch against tensorlib."""
    x = RNG.standard_normal(shape)
    ty, y = tm(torch.tensor(x)), m(tensorlib.tensor(x, device=device))
    np.testing.assert_allclose(npy(y), ty.detach().numpy(), **TOL)
    (ty ** 2).sum().backward()
    (y ** 2).sum().backward()
    for name, p in tm.named_parameters():
        np.testing.assert_allclose(npy(m.get_parameter(name).grad), p.grad.numpy(),
                                   err_msg=name, **TOL)


@pytest.mark.parametrize("dim", [0, 1, None, -2])
def test_weight_norm(device, dim):
    torch.manual_seed(0)
    tm = tparametrizations.weight_norm(torch.nn.Conv1d(2, 3, 4).double(), dim=dim)
    m = parametrizations.weight_norm(nn.Conv1d(2, 3, 4).double(), dim=dim)
    assert list(m.state_dict()) == list(tm.state_dict())
    for key, value in tm.state_dict().items():
        assert tuple(m.state_dict()[key].shape) == tuple(value.shape), key
    load(tm, m, device)
    compare_step(tm, m, device, (2, 2, 6))


def test_weight_norm_loads_old_keys():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = nn.utils.weight_norm(nn.Linear(3, 4))
    new = parametrizations.weight_norm(nn.Linear(3, 4))
    new.load_state_dict(old.state_dict())
    np.testing.assert_allclose(npy(new.weight), npy(old.weight), rtol=1e-6)


@pytest.mark.parametrize("cls, args, shape", [
    ("Linear", (3, 4), (2, 3)),
    ("Conv2d", (2, 3, 2), (1, 2, 4, 4)),
    ("ConvTranspose1d", (3, 2, 2), (2, 3, 5)),
])
def test_spectral_norm(device, cls, args, shape):
    torch.manual_seed(0)
    tm = tparametrizations.spectral_norm(getattr(torch.nn, cls)(*args).double())
    m = parametrizations.spectral_norm(getattr(nn, cls)(*args).double())
    assert list(m.state_dict()) == list(tm.state_dict())
    assert m.parametrizations.weight[0].dim == tm.parametrizations.weight[0].dim
    load(tm, m, device)
    compare_step(tm, m, device, shape)            # training: one power iteration
    np.testing.assert_allclose(npy(m.parametrizations.weight[0]._u),
                               tm.parametrizations.weight[0]._u.numpy(), **TOL)
    tm.eval()
    m.eval()
    compare_step(tm, m, device, shape)
    sigma = np.linalg.svd(npy(m.weight).reshape(npy(m.weight).shape[0], -1)
                          if cls != "ConvTranspose1d" else
                          npy(m.weight).transpose(1, 0, 2).reshape(2, -1), compute_uv=False)
    assert abs(sigma[0] - 1) < 0.2   # a few power iterations: close to 1


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder", None])
@pytest.mark.parametrize("out_in", [(4, 4), (3, 5), (5, 3)])
def test_orthogonal(device, orthogonal_map, out_in):
    torch.manual_seed(0)
    tm = tparametrizations.orthogonal(torch.nn.Linear(out_in[1], out_in[0]).double(),
                                      orthogonal_map=orthogonal_map)
    m = parametrizations.orthogonal(nn.Linear(out_in[1], out_in[0]).double(),
                                    orthogonal_map=orthogonal_map)
    assert list(m.state_dict()) == list(tm.state_dict())
    assert m.parametrizations.weight[0].orthogonal_map.name == \
        tm.parametrizations.weight[0].orthogonal_map.name
    # move the original off its initial value the same way in both (off the diagonal:
    # householder reads the diagonal's signs)
    state = tm.state_dict()
    offset = RNG.standard_normal(out_in) * 0.3 * (1 - np.eye(*out_in))
    state["parametrizations.weight.original"] = state["parametrizations.weight.original"] + \
        torch.tensor(offset)
    tm.load_state_dict(state)
    load(tm, m, device)
    W = npy(m.weight)
    np.testing.assert_allclose(W, tm.weight.detach().numpy(), rtol=1e-8, atol=1e-10)
    small = min(out_in)
    gram = W @ W.T if out_in[0] == small else W.T @ W
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-10)
    compare_step(tm, m, device, (2, out_in[1]))


def test_orthogonal_assignment_and_errors():
    m = parametrizations.orthogonal(nn.Linear(3, 5).double(), use_trivialization=False)
    tm = tparametrizations.orthogonal(torch.nn.Linear(3, 5).double(), use_trivialization=False)
    q = np.linalg.qr(RNG.standard_normal((5, 3)))[0]
    m.weight = tensorlib.tensor(q)
    tm.weight = torch.tensor(q)
    np.testing.assert_allclose(npy(m.parametrizations.weight.original),
                               tm.parametrizations.weight.original.detach().numpy(), **TOL)
    np.testing.assert_allclose(npy(m.weight), q, atol=1e-12)
    square = parametrizations.orthogonal(nn.Linear(4, 4).double())
    q = np.linalg.qr(RNG.standard_normal((4, 4)))[0]
    square.weight = tensorlib.tensor(q)
    np.testing.assert_allclose(npy(square.weight), q, atol=1e-12)
    for lib, mod in ((torch, torch.nn.Linear(3, 3)), (tensorlib, nn.Linear(3, 3))):
        with pytest.raises(ValueError, match='orthogonal_map has to be one of'):
            lib.nn.utils.parametrizations.orthogonal(mod, orthogonal_map="qr")
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a "
                                             "tensor of 1 dimensions."):
            lib.nn.utils.parametrizations.orthogonal(mod, "bias")
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
            lib.nn.utils.parametrizations.spectral_norm(mod, "nope")
    bad = parametrizations.orthogonal(nn.Linear(3, 3).double(), "weight", "cayley",
                                      use_trivialization=False)
    with pytest.raises(NotImplementedError, match="not possible to assign to the matrix"):
        bad.weight = tensorlib.eye(3, dtype=tensorlib.float64)
    assert parametrizations.__all__ == tparametrizations.__all__


def test_matrix_maps_match_torch_and_gradcheck(device):
    from tensorlib.autograd import gradcheck
    from tensorlib.nn.utils._matrix_functions import geqrf, householder_product, matrix_exp
    a = RNG.standard_normal((2, 4, 4))
    for scale in (0.1, 3.0):   # with and without squaring
        np.testing.assert_allclose(npy(matrix_exp(tensorlib.tensor(a * scale, device=device))),
                                   torch.matrix_exp(torch.tensor(a * scale)).numpy(),
                                   rtol=1e-10, atol=1e-12)
    tall = RNG.standard_normal((5, 3))
    packed, tau = geqrf(tensorlib.tensor(tall, device=device))
    tpacked, ttau = torch.geqrf(torch.tensor(tall))
    np.testing.assert_allclose(npy(packed), tpacked.numpy(), **TOL)
    np.testing.assert_allclose(npy(tau), ttau.numpy(), **TOL)
    np.testing.assert_allclose(npy(householder_product(packed, tau)),
                               torch.linalg.householder_product(tpacked, ttau).numpy(), **TOL)
    x = tensorlib.tensor(a[0] * 0.5, device=device, requires_grad=True)
    t = tensorlib.tensor([1.2, 0.7, 0.3], dtype=tensorlib.float64, device=device,
                         requires_grad=True)
    assert gradcheck(matrix_exp, (x,))
    assert gradcheck(householder_product, (x[:, :3], t))


@pytest.mark.parametrize("shape", [(3, 5), (2, 6, 4), (4, 4), (1, 1)])
def test_geqrf_on_the_device_matches_torch(device, shape):
    """geqrf is Householder QR in tensorlib ops (no host LAPACK): wide, batched, square with a
    column already reduced (tau = 0, LAPACK's identity reflector) and 1x1."""
    from tensorlib.nn.utils._matrix_functions import geqrf
    a = RNG.standard_normal(shape)
    if shape == (4, 4):
        a[1:, 0] = 0.0
    packed, tau = geqrf(tensorlib.tensor(a, device=device))
    tpacked, ttau = torch.geqrf(torch.tensor(a))
    assert packed.device.type == tau.device.type == tensorlib.device(device).type
    np.testing.assert_allclose(npy(packed), tpacked.numpy(), **TOL)
    np.testing.assert_allclose(npy(tau), ttau.numpy(), **TOL)
