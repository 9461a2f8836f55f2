"""In-place views (t_, transpose_, swapdims_, squeeze_, unsqueeze_) against torch: shapes and
values, the storage kept, gradients through a non-leaf, torch's error on a leaf."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name,args", [("t_", ()), ("transpose_", (0, 2)),
                                       ("swapdims_", (1, 2)), ("squeeze_", ()),
                                       ("squeeze_", (1,)), ("unsqueeze_", (-1,))])
def test_inplace_views_match_torch(device, name, args):
    a = np.arange(6.0).reshape((2, 3) if name == "t_" else (2, 1, 3))
    x, tx = tl.tensor(a, device=device), torch.tensor(a)
    storage = x._storage
    assert getattr(x, name)(*args) is x
    getattr(tx, name)(*args)
    assert tuple(x.shape) == tuple(tx.shape) and x._storage is storage
    np.testing.assert_array_equal(x.cpu().numpy(), tx.numpy())
    np.testing.assert_array_equal((x + 1).cpu().numpy(), (tx + 1).numpy())


def test_gradient_flows_through_an_inplace_view_of_a_non_leaf():
    a = np.arange(6.0).reshape(2, 3)
    w = np.linspace(-1, 1, 6).reshape(3, 2)
    x, tx = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = x * 2, tx * 2
    y.t_()
    ty.t_()
    (y * tl.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    with pytest.raises(RuntimeError, match="leaf Variable"):
        tl.ones(2, 3, requires_grad=True).t_()
    with tl.no_grad():
        assert tuple(tl.ones(2, 3, requires_grad=True).t_().shape) == (3, 2)


def test_inplace_views_take_their_arguments_by_keyword():
    x = tl.zeros(2, 3)
    assert x.unsqueeze_(dim=-3) is x and tuple(x.shape) == (1, 2, 3)
    assert tuple(x.squeeze_(dim=0).shape) == (2, 3)
    assert tuple(x.transpose_(dim0=0, dim1=1).shape) == (3, 2)
