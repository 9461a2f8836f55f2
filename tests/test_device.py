"""Device strings, moving tensors, and the errors for unknown or unavailable backends."""
import pytest

import tensorlib as tl


def test_device_parsing_and_equality():
    assert str(tl.device("cpu")) == "cpu"
    d = tl.device("opencl:1")
    assert d.type == "opencl" and d.index == 1
    assert tl.device("opencl", 1) == d
    assert repr(tl.device("cpu")) == "device(type='cpu')"
    assert tl.zeros(1).device == tl.device("cpu")
    assert tl.zeros(1).device == "cpu"


def test_unknown_device_type():
    with pytest.raises(RuntimeError, match="Unknown device type 'tpu'.*cpu"):
        tl.device("tpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        tl.device("cpu:x")


def test_unavailable_backend_says_why():
    reason = tl.backends.why_unavailable("cuda")
    if reason is None:
        pytest.skip("a CUDA backend is available here")
    with pytest.raises(RuntimeError, match="The 'cuda' backend is unavailable"):
        tl.zeros(2, device="cuda")
    assert tl.zeros(2).sum().item() == 0      # everything still usable


def test_to_and_cpu(device):
    x = tl.arange(6).view(2, 3)
    y = x.to(device)
    assert y.device.type == device.split(":")[0]
    assert y.cpu().tolist() == x.tolist()
    assert x.to("cpu") is x
    assert x.to(tl.float64).dtype is tl.float64
    assert x.to(device, tl.float32).cpu().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert x.to(x) is x
    assert x.to("cpu", copy=True) is not x


def test_device_as_a_context_sets_the_factories_default():
    """`with torch.device(...):` (torchmetrics' tests use it) makes factories allocate there
    until the block ends, nested blocks included, and restores the default after an error."""
    torch = pytest.importorskip("torch")
    for lib in (torch, tl):
        with lib.device("meta") as d:
            assert d == lib.device("meta")
            assert lib.zeros(2).device.type == "meta" and lib.get_default_device().type == "meta"
            with lib.device("cpu"):
                assert lib.ones(1).device.type == "cpu"
            assert lib.empty(1).device.type == "meta"
        assert lib.zeros(1).device.type == "cpu"
        with pytest.raises(ValueError):
            with lib.device("meta"):
                raise ValueError("inside")
        assert lib.get_default_device().type == "cpu"


def test_cpu_with_an_index_is_the_cpu():
    """'cpu:0' names the one CPU device: tensors made there work with tensors made on 'cpu'
    in either order (it used to replace the CPU's device instance, and ops between the two
    said 'Expected all tensors to be on the same device ... cpu and cpu')."""
    a = tl.ones(2, 2)
    b = tl.eye(2, device="cpu:0")
    c = tl.zeros(2, device=tl.device("cpu", 0)).to("cpu:0")
    assert a.device == b.device == c.device == tl.device("cpu")
    assert (a @ b).tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert (tl.ones(2, 2) @ b + c).tolist() == [[1.0, 1.0], [1.0, 1.0]]
