"""tril_indices, triu_indices, cartesian_prod, combinations and cdist against torch, on
every test device."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck

from ..autograd._util import require_float64

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("args", [(4, 3), (4, 3, 1), (3, 5, -1), (0, 3), (3, 3, 5)])
def test_triangle_indices(args, device):
    for ours, theirs in [(tl.tril_indices, torch.tril_indices),
                         (tl.triu_indices, torch.triu_indices)]:
        got = ours(*args, device=device)
        assert got.dtype == tl.int64 and got.device.type == tl.device(device).type
        np.testing.assert_array_equal(got.cpu().numpy(), theirs(*args).numpy())


def test_cartesian_prod_and_combinations(device):
    a, b = np.arange(4.0), np.array([5.0, 6.0])
    ta, tb = tl.tensor(a, device=device), tl.tensor(b, device=device)
    np.testing.assert_array_equal(tl.cartesian_prod(ta, tb).cpu().numpy(),
                                  torch.cartesian_prod(torch.tensor(a), torch.tensor(b)).numpy())
    for r, rep in [(2, False), (3, False), (2, True), (5, False)]:
        np.testing.assert_array_equal(
            tl.combinations(ta, r, rep).cpu().numpy(),
            torch.combinations(torch.tensor(a), r, rep).numpy())
    with pytest.raises(RuntimeError, match="Expect a 1D vector"):
        tl.combinations(tl.zeros(2, 2))


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("rows", [4, 30])
def test_cdist(p, rows, device):
    require_float64(device)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(2, rows, 3)), rng.normal(size=(2, 5, 3))
    got = tl.cdist(tl.tensor(x, device=device), tl.tensor(y, device=device), p)
    want = torch.cdist(torch.tensor(x), torch.tensor(y), p)
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_cdist_gradient_and_errors():
    rng = np.random.default_rng(1)
    x = tl.tensor(rng.normal(size=(3, 2)), requires_grad=True)
    y = tl.tensor(rng.normal(size=(4, 2)), requires_grad=True)
    assert gradcheck(lambda a, b: tl.cdist(a, b), [x, y])
    assert gradcheck(lambda a, b: tl.cdist(a, b, 2.0, "use_mm_for_euclid_dist"), [x, y])
    with pytest.raises(RuntimeError, match="same number of columns"):
        tl.cdist(tl.zeros(2, 3), tl.zeros(2, 4))
