"""The meta device against torch's: metadata propagates through creation, elementwise,
matmul, reductions, views, nn layers, autograd and an optimizer step, with no memory; data
reads raise torch's errors; Module.to_empty moves a meta module onto a real device."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F

torch = pytest.importorskip("torch")


def _both(fn):
    return fn(tl), fn(torch)


@pytest.mark.parametrize("make", [
    lambda lib: lib.empty(2, 3, device="meta") + lib.ones(3, device="meta"),
    lambda lib: lib.randn(4, 3, device="meta").t() @ lib.randn(4, 5, device="meta"),
    lambda lib: lib.zeros(2, 3, 4, device="meta").sum(1, keepdim=True),
    lambda lib: lib.arange(6, device="meta").reshape(2, 3).float().mean(0),
    lambda lib: lib.ones(2, 3, device="meta", dtype=lib.int32) * 2.5,
    lambda lib: lib.cat([lib.empty(2, 3, device="meta")] * 3, 1)[:, ::2],
    lambda lib: lib.empty(2, 3, 4, 5, device="meta").contiguous(
        memory_format=lib.channels_last).exp(),
    lambda lib: lib.nn.functional.softmax(lib.empty(3, 7, device="meta"), -1),
    lambda lib: lib.tensor([1, 2, 3], device="meta").unsqueeze(0).expand(4, 3),
])
def test_metadata_propagates_as_torch(make):
    got, want = _both(make)
    assert got.is_meta and want.is_meta
    assert tuple(got.shape) == tuple(want.shape)
    assert got.stride() == want.stride()
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]


def test_nn_forward_backward_and_step_on_meta():
    net = tl.nn.Sequential(tl.nn.Conv2d(3, 8, 3, padding=1), tl.nn.BatchNorm2d(8), tl.nn.ReLU(),
                           tl.nn.MaxPool2d(2), tl.nn.Flatten(), tl.nn.Linear(8 * 4 * 4, 10))
    net.to("meta")
    out = net(tl.randn(2, 3, 8, 8, device="meta"))
    assert out.shape == (2, 10) and out.is_meta
    F.cross_entropy(out, tl.zeros(2, dtype=tl.int64, device="meta")).backward()
    assert net[0].weight.grad.shape == (8, 3, 3, 3) and net[0].weight.grad.is_meta
    tl.optim.SGD(net.parameters(), lr=0.1, momentum=0.9).step()
    layer = tl.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, device="meta")
    assert layer(tl.randn(2, 5, 16, device="meta")).shape == (2, 5, 16)


def test_a_huge_meta_module_takes_no_memory_and_to_empty_gives_it_some():
    big = tl.nn.Linear(200_000, 100_000, device="meta")     # 80 GB of float32 if real
    assert big.weight.shape == (100_000, 200_000) and big.weight.is_meta
    small = tl.nn.Linear(3, 4, device="meta").to_empty(device="cpu")
    assert small.weight.device.type == "cpu" and isinstance(small.weight, tl.nn.Parameter)
    tl.nn.init.ones_(small.weight)
    np.testing.assert_array_equal(small.weight.detach().numpy(), np.ones((4, 3)))


def test_reading_data_raises_as_torch():
    m, t = tl.empty(2, 3, device="meta"), torch.empty(2, 3, device="meta")
    for op in (lambda x: x.cpu(), lambda x: x.tolist(), lambda x: x.to("cpu")):
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
            op(m)
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
            op(t)
    for x in (m, t):
        with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
            x.sum().item()
        with pytest.raises(TypeError, match="numpy"):
            x.numpy()
    with pytest.raises(RuntimeError, match="same device"):
        m + tl.ones(3)
    assert repr(m) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(tl.ones(2, dtype=tl.int64, device="meta")) == \
        "tensor(..., device='meta', size=(2,), dtype=tensorlib.int64)"
    assert not tl.accelerator.is_available() or tl.accelerator.current_accelerator().type != "meta"


_DATA_DEPENDENT = {
    "nonzero": lambda lib, x: lib.nonzero(x),
    "nonzero_method": lambda lib, x: x.nonzero(),
    "argwhere": lambda lib, x: lib.argwhere(x),
    "where_one_argument": lambda lib, x: lib.where(x > 0),
    "bool_index": lambda lib, x: x[x > 0],
    "masked_select": lambda lib, x: lib.masked_select(x, x > 0),
    "unique": lambda lib, x: lib.unique(x),
    "unique_dim": lambda lib, x: lib.unique(x, dim=0),
    "unique_consecutive": lambda lib, x: lib.unique_consecutive(x),
    "bincount": lambda lib, x: lib.bincount(x.long().reshape(-1)),
}


@pytest.mark.parametrize("name", sorted(_DATA_DEPENDENT))
def test_data_dependent_ops_raise_not_implemented_as_torch(name):
    op = _DATA_DEPENDENT[name]
    with pytest.raises(NotImplementedError) as theirs:
        op(torch, torch.ones(3, 2, device="meta"))
    with pytest.raises(NotImplementedError) as ours:
        op(tl, tl.ones(3, 2, device="meta"))
    # torch's text, up to its own names (torch.nonzero -> tensorlib.nonzero)
    head = str(theirs.value).split(",")[0].replace("torch.", "tensorlib.")
    assert str(ours.value).startswith(head)


def test_meta_device_has_no_index_as_torch():
    for lib in (tl, torch):
        x = lib.ones(2, device="meta")
        assert str(x.device) == "meta" and repr(x.device) == "device(type='meta')"
        assert repr(lib.device("meta")) == "device(type='meta')"
        assert x.device == lib.device("meta") and lib.ones(2, device=x.device).is_meta
