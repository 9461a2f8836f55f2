"""Lazy modules against PyTorch: shapes inferred at the first forward, then the module is its
normal class; has_uninitialized_params; state_dict of an uninitialized module and loading
into one; PyTorch's errors on using uninitialized tensors; an optimizer made before the dry
run trains after it; on every device."""
import copy
import warnings

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
from tensorlib.nn.modules.lazy import LazyModuleMixin
from tensorlib.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

torch = pytest.importorskip("torch")

CASES = [
    ("LazyLinear", (3,), (2, 5), "Linear"),
    ("LazyConv1d", (4, 3), (2, 2, 6), "Conv1d"),
    ("LazyConv2d", (4, 3), (3, 5, 5), "Conv2d"),
    ("LazyConv3d", (2, 2), (1, 2, 3, 3, 3), "Conv3d"),
    ("LazyConvTranspose1d", (4, 3), (2, 4, 5), "ConvTranspose1d"),
    ("LazyConvTranspose2d", (2, 2), (1, 3, 3, 3), "ConvTranspose2d"),
    ("LazyConvTranspose3d", (2, 2), (1, 3, 2, 2, 2), "ConvTranspose3d"),
    ("LazyBatchNorm1d", (), (4, 3), "BatchNorm1d"),
    ("LazyBatchNorm2d", (), (2, 3, 2, 2), "BatchNorm2d"),
    ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2), "BatchNorm3d"),
    ("LazyInstanceNorm1d", (), (2, 3, 4), "InstanceNorm1d"),
    ("LazyInstanceNorm2d", (), (2, 3, 4, 4), "InstanceNorm2d"),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2), "InstanceNorm3d"),
]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("lazy, args, shape, becomes", CASES)
def test_lazy_module_becomes_its_class(device, lazy, args, shape, becomes):
    tm = getattr(torch.nn, lazy)(*args)
    m = getattr(nn, lazy)(*args, device=device)
    assert isinstance(m, LazyModuleMixin) and m.has_uninitialized_params()
    assert list(m.state_dict()) == list(tm.state_dict())
    assert all(is_lazy(v) for k, v in m.state_dict().items() if k != "num_batches_tracked")
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ty = tm(torch.tensor(x))
    m(tensorlib.tensor(x, device=device))                  # the dry run infers the shapes
    m.load_state_dict({k: tensorlib.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    y = m(tensorlib.tensor(x, device=device))
    assert type(m) is getattr(nn, becomes) and type(tm).__name__ == becomes
    assert not hasattr(m, "_initialize_hook") and not m._forward_pre_hooks
    assert repr(m) == repr(tm)
    assert list(m.state_dict()) == list(tm.state_dict())
    for key, value in tm.state_dict().items():
        assert tuple(m.state_dict()[key].shape) == tuple(value.shape), key
        assert m.state_dict()[key].device.type == device
    np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), rtol=1e-4,
                               atol=1e-5)


def test_initialization_draws_as_the_eager_layer():
    """As in PyTorch, a lazy layer after its dry run holds the values the eager layer of
    the same shape gets from the same seed."""
    tensorlib.manual_seed(3)
    lazy = nn.LazyLinear(4)
    lazy(tensorlib.zeros(1, 6))
    tensorlib.manual_seed(3)
    eager = nn.Linear(6, 4)
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), eager.weight.detach().numpy())
    np.testing.assert_array_equal(lazy.bias.detach().numpy(), eager.bias.detach().numpy())


def test_load_state_dict_materializes_and_optimizer_made_before_dry_run():
    source = nn.Linear(5, 3)
    lazy = nn.LazyLinear(3)
    lazy.load_state_dict(source.state_dict())
    assert not lazy.has_uninitialized_params() and isinstance(lazy, nn.LazyLinear)
    tlazy = torch.nn.LazyLinear(3)
    tlazy.load_state_dict(torch.nn.Linear(5, 3).state_dict())
    lazy(tensorlib.zeros(1, 5))
    tlazy(torch.zeros(1, 5))
    assert repr(lazy) == repr(tlazy)
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), source.weight.detach().numpy())

    model = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
    opt = tensorlib.optim.SGD(model.parameters(), lr=0.1)
    x = tensorlib.randn(8, 3)
    model(x)                                          # dry run
    before = model[0].weight.detach().clone()
    model(x).pow(2).mean().backward()
    opt.step()
    assert not np.allclose(model[0].weight.detach().numpy(), before.numpy())
    assert type(model[0]) is nn.Linear and model[0].in_features == 3
    # and an optimizer made after the dry run sees the same parameters
    assert [p.shape for p in tensorlib.optim.Adam(model.parameters()).param_groups[0]["params"]] \
        == [(4, 3), (4,), (1, 4), (1,)]


def test_uninitialized_tensor_errors_match_torch():
    tp, p = torch.nn.UninitializedParameter(), UninitializedParameter()
    assert repr(p) == repr(tp) == "<UninitializedParameter>"
    assert isinstance(p, nn.Parameter) and p.requires_grad
    for use in (lambda t: t.sum(), lambda t: t + 1, lambda t: t.view(-1), lambda t: t[0]):
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
            use(tp)
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
            use(p)
    for t in (tp, p):
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
            t.shape  # noqa: B018
        with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized"):
            t.share_memory_()
    assert p.dtype == tensorlib.float32 and p.device.type == "cpu"
    assert repr(copy.deepcopy(p)) == "<UninitializedParameter>"
    p.materialize((2, 3), dtype=tensorlib.float64)
    assert type(p) is nn.Parameter and p.shape == (2, 3) and p.dtype == tensorlib.float64
    buf = UninitializedBuffer()
    assert repr(buf) == "<UninitializedBuffer>" and not buf.requires_grad
    buf.materialize((4,))
    assert type(buf) is tensorlib.Tensor and buf.shape == (4,)

    for lib in (torch, tensorlib):
        conv = lib.nn.LazyConv2d(4, 3)
        with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) "
                                               r"input to LazyConv2d"):
            conv(lib.zeros(2, 3))
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            lib.nn.LazyConv2d(4, 3, groups=2)(lib.zeros(1, 3, 5, 5))
    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented"):
        class Lazy(LazyModuleMixin, nn.Module):
            def forward(self, x):
                return x
        Lazy()(tensorlib.zeros(1))
    with pytest.raises(ValueError, match="can't have uninitialized parameters"):
        nn.utils.weight_norm(nn.LazyLinear(2))


def test_moving_and_casting_before_the_dry_run(device):
    model = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d()).to(device).double()
    assert is_lazy(model[0].weight) and is_lazy(model[1].running_mean)
    assert model[0].weight.dtype == tensorlib.float64
    assert model[1].running_var.device.type == device
    y = model(tensorlib.randn(4, 5, dtype=tensorlib.float64, device=device))
    assert y.dtype == tensorlib.float64 and y.device.type == device
    assert model[1].running_mean.dtype == tensorlib.float64
    assert type(model[1].running_mean) is tensorlib.Tensor
