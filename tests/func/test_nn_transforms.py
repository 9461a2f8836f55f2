"""torch.func transforms over code written with the usual nn functionals and modules:
per-sample gradients (vmap of grad through functional_call), MAML's grad of grad, and
jacrev, compared with torch.func on the same weights and inputs."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 3)).eval()


def _convnet(lib):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3)
            self.norm = nn.LayerNorm(6)
            self.fc = nn.Linear(4 * 6 * 6, 3)

        def forward(self, x):
            h = self.norm(F.relu(F.conv2d(x, self.conv.weight, self.conv.bias)))
            h = F.dropout(h, 0.3, training=self.training)
            return F.softmax(self.fc(h.flatten(1)), dim=-1).log()

    return Net().eval()


def _pair(build, device):
    """The same module in both libraries: tensorlib's weights copied into torch's."""
    ours = build(tl).to(device)
    theirs = build(torch)
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            p.copy_(torch.from_numpy(dict(ours.named_parameters())[name].detach().cpu().numpy()))
    return ours, theirs


def _close(ours, theirs, tol=1e-4):
    assert set(ours) == set(theirs)
    for k in theirs:
        assert tuple(ours[k].shape) == tuple(theirs[k].shape), k
        np.testing.assert_allclose(ours[k].detach().cpu().numpy(), theirs[k].numpy(),
                                   rtol=tol, atol=tol, err_msg=k)


def _data(shape, classes, device):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.integers(0, classes, shape[0])
    return ((tl.tensor(x, device=device), tl.tensor(y, device=device)),
            (torch.tensor(x), torch.tensor(y)))


def _per_sample(lib, module, loss, x, y):
    F, func = lib.nn.functional, lib.func
    params = {k: v.detach() for k, v in module.named_parameters()}

    def sample_loss(p, xi, yi):
        out = func.functional_call(module, p, (xi.unsqueeze(0),))
        return getattr(F, loss)(out, yi.unsqueeze(0))
    return func.vmap(func.grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)


@pytest.mark.parametrize("build,shape", [(_mlp, (5, 4)), (_convnet, (3, 1, 8, 8))])
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_per_sample_gradients_match_torch(build, shape, loss, device):
    ours, theirs = _pair(build, device)
    (x, y), (tx, ty) = _data(shape, 3, device)
    _close(_per_sample(tl, ours, loss, x, y), _per_sample(torch, theirs, loss, tx, ty))


def _mse_per_sample(lib, module, x):
    F, func = lib.nn.functional, lib.func
    params = {k: v.detach() for k, v in module.named_parameters()}

    def sample_loss(p, xi):
        out = func.functional_call(module, p, (xi.unsqueeze(0),))
        return F.mse_loss(out, lib.zeros_like(out))
    grads, values = func.vmap(func.grad_and_value(sample_loss), in_dims=(None, 0))(params, x)
    return dict(grads, loss=values)


def test_grad_and_value_with_mse_matches_torch(device):
    ours, theirs = _pair(_mlp, device)
    (x, _), (tx, _) = _data((6, 4), 3, device)
    _close(_mse_per_sample(tl, ours, x), _mse_per_sample(torch, theirs, tx))


def _maml(lib, module, x, y):
    """One inner SGD step taken functionally, the outer loss differentiated through it."""
    F, func = lib.nn.functional, lib.func
    params = {k: v.detach() for k, v in module.named_parameters()}

    def inner_loss(p):
        return F.cross_entropy(func.functional_call(module, p, (x,)), y)

    def outer_loss(p):
        step = func.grad(inner_loss)(p)
        adapted = {k: p[k] - 0.1 * step[k] for k in p}
        return inner_loss(adapted)
    return func.grad(outer_loss)(params)


def test_maml_grad_of_grad_matches_torch(device):
    ours, theirs = _pair(_mlp, device)
    (x, y), (tx, ty) = _data((5, 4), 3, device)
    _close(_maml(tl, ours, x, y), _maml(torch, theirs, tx, ty))


def _jacobian(lib, module, x):
    F, func = lib.nn.functional, lib.func
    params = {k: v.detach() for k, v in module.named_parameters()}
    jac = func.jacrev(lambda p: F.layer_norm(func.functional_call(module, p, (x,)), (3,)))
    return jac(params)


def test_jacrev_through_functional_call_matches_torch(device):
    ours, theirs = _pair(_mlp, device)
    (x, _), (tx, _) = _data((2, 4), 3, device)
    _close(_jacobian(tl, ours, x), _jacobian(torch, theirs, tx))
