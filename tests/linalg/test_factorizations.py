"""linalg's LU family, matrix_exp, solve_ex, cond, tensorinv, tensorsolve and diagonal
against PyTorch: values, gradients (batched, on every test device) and errors."""
import numpy as np
import pytest

import tensorlib
import tensorlib.linalg as LA

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(41)


def pair(a, device, grad=True):
    return tensorlib.tensor(a, device=device, requires_grad=grad), torch.tensor(
        a, requires_grad=grad)


def close(x, y, tol=1e-10):
    np.testing.assert_allclose(x.detach().cpu().numpy(), y.detach().numpy(), rtol=tol, atol=tol)


def grads_match(ours, theirs, x, tx, tol=1e-9):
    w = RNG.standard_normal(tuple(theirs.shape))
    (ours * tensorlib.tensor(w, device=x.device)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    close(x.grad, tx.grad, tol)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (3, 5), (5, 3)])
def test_lu_factor_and_lu_match_torch(device, shape):
    a = RNG.standard_normal(shape)
    x, tx = pair(a, device)
    LU, piv = LA.lu_factor(x)
    tLU, tpiv = torch.linalg.lu_factor(tx)
    close(LU, tLU)
    assert piv.dtype == tensorlib.int32
    np.testing.assert_array_equal(piv.cpu().numpy(), tpiv.numpy())
    for got, want in zip(LA.lu(x), torch.linalg.lu(tx)):
        close(got, want)
    if shape[-1] == shape[-2]:
        grads_match(LU, tLU, x, tx)
        x.grad, tx.grad = None, None
        P, L, U = LA.lu(x)
        tP, tL, tU = torch.linalg.lu(tx)
        grads_match(L + U, tL + tU, x, tx)


@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False),
                                          (False, True)])
def test_lu_solve_values_and_gradients(device, left, adjoint):
    a = RNG.standard_normal((2, 4, 4)) + 4 * np.eye(4)
    b = RNG.standard_normal((2, 4, 3) if left else (2, 3, 4))
    x, tx = pair(a, device)
    y, ty = pair(b, device)
    got = LA.lu_solve(*LA.lu_factor(x), y, left=left, adjoint=adjoint)
    want = torch.linalg.lu_solve(*torch.linalg.lu_factor(tx), ty, left=left, adjoint=adjoint)
    close(got, want)
    grads_match(got, want, x, tx)
    close(y.grad, ty.grad)


def test_matrix_exp_values_and_gradients(device):
    a = RNG.standard_normal((3, 4, 4))
    x, tx = pair(a, device)
    got, want = LA.matrix_exp(x), torch.linalg.matrix_exp(tx)
    close(got, want, 1e-9)
    grads_match(got, want, x, tx, 1e-8)
    half = LA.matrix_exp(tensorlib.tensor(a[0] / 4, dtype=tensorlib.float16))
    assert half.dtype == tensorlib.float16


def test_solve_ex(device):
    a = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal((2, 3))
    x, tx = pair(a, device)
    got, info = LA.solve_ex(x, tensorlib.tensor(b, device=device))
    want, tinfo = torch.linalg.solve_ex(tx, torch.tensor(b))
    close(got, want)
    np.testing.assert_array_equal(info.cpu().numpy(), tinfo.numpy())
    assert info.dtype == tensorlib.int32
    grads_match(got, want, x, tx)
    singular = np.zeros((2, 2))
    got, info = LA.solve_ex(tensorlib.tensor(singular), tensorlib.ones(2, dtype=tensorlib.float64))
    assert int(info.item()) == int(torch.linalg.solve_ex(torch.tensor(singular),
                                                         torch.ones(2, dtype=torch.float64))[1])
    with pytest.raises(torch.linalg.LinAlgError.__mro__[1]):
        LA.solve_ex(tensorlib.tensor(singular), tensorlib.ones(2, dtype=tensorlib.float64),
                    check_errors=True)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, float("inf")])
def test_cond_matches_torch(device, p):
    a = RNG.standard_normal((2, 3, 3))
    x, tx = pair(a, device)
    got, want = LA.cond(x, p), torch.linalg.cond(tx, p)
    close(got, want, 1e-9)
    if p in (None, 2, -2):      # torch's backward of the other norms fails (its in-place inv)
        grads_match(got, want, x, tx, 1e-8)
    empty = LA.cond(tensorlib.zeros(2, 0, 0), p)
    close(empty, torch.linalg.cond(torch.zeros(2, 0, 0), p))


def test_tensorinv_tensorsolve_diagonal(device):
    a = RNG.standard_normal((4, 2, 2)) + np.eye(4).reshape(4, 2, 2)
    x, tx = pair(a, device)
    got, want = LA.tensorinv(x, ind=1), torch.linalg.tensorinv(tx, ind=1)
    close(got, want)
    grads_match(got, want, x, tx)
    a = RNG.standard_normal((2, 3, 6)) + 3 * np.eye(6).reshape(2, 3, 6)
    b = RNG.standard_normal((2, 3))
    x, tx = pair(a, device)
    got = LA.tensorsolve(x, tensorlib.tensor(b, device=device))
    want = torch.linalg.tensorsolve(tx, torch.tensor(b))
    close(got, want)
    grads_match(got, want, x, tx)
    a = RNG.standard_normal((6, 2, 3))
    close(LA.tensorsolve(tensorlib.tensor(a), tensorlib.tensor(b), dims=(0,)),
          torch.linalg.tensorsolve(torch.tensor(a), torch.tensor(b), dims=(0,)))
    d = RNG.standard_normal((2, 3, 4))
    close(LA.diagonal(tensorlib.tensor(d), offset=1),
          torch.linalg.diagonal(torch.tensor(d), offset=1))


@pytest.mark.parametrize("shape,k", [((5, 3), 3), ((2, 4, 4), 2), ((3, 3), 1)])
def test_householder_product_values_and_gradients(device, shape, k):
    a = RNG.standard_normal(shape)
    t = RNG.uniform(0, 2, shape[:-2] + (k,))
    x, tx = pair(a, device)
    tau, ttau = pair(t, device)
    got = LA.householder_product(x, tau)
    want = torch.linalg.householder_product(tx, ttau)
    close(got, want)
    grads_match(got, want, x, tx)
    close(tau.grad, ttau.grad, 1e-9)


ERRORS = [
    ("householder_product", (np.ones((2, 3)), np.ones(1)), {}),
    ("householder_product", (np.ones((3, 2)), np.ones(3)), {}),
    ("householder_product", (np.ones(3), np.ones(1)), {}),
    ("householder_product", (np.ones((2, 3, 2)), np.ones((3, 1))), {}),
    ("householder_product", (np.ones((3, 2)), np.ones(1, np.float32)), {}),
    ("lu_factor", (np.ones(3),), {}),
    ("lu_factor", (np.zeros((2, 2)),), {}),
    ("lu_factor", (np.ones((2, 2), np.int64),), {}),
    ("lu", (np.ones((2, 2), np.int64),), {}),
    ("matrix_exp", (np.ones((2, 3)),), {}),
    ("matrix_exp", (np.ones((2, 2), np.int64),), {}),
    ("cond", (np.ones((2, 3)), "fro"), {}),
    ("tensorinv", (np.ones((4, 2, 2)), 0), {}),
    ("tensorinv", (np.ones((4, 2, 3)), 1), {}),
    ("tensorsolve", (np.ones((2, 3, 5)), np.ones((2, 3))), {}),
]


@pytest.mark.parametrize("name,args,kwargs", ERRORS)
def test_errors_match_torch(name, args, kwargs):
    def call(lib):
        conv = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        return getattr(lib.linalg, name)(*conv, **kwargs)
    with pytest.raises(Exception) as ref:
        call(torch)
    with pytest.raises(type(ref.value)) as got:
        call(tensorlib)
    assert str(got.value) == str(ref.value)
