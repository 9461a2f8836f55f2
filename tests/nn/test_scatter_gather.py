"""torch.nn.parallel.scatter_gather: how containers are split per device, and the CPU
refusals, against PyTorch's (tensors themselves need an accelerator on both)."""
from collections import namedtuple

import pytest

import tensorlib
from tensorlib.nn.parallel.scatter_gather import gather, scatter, scatter_kwargs

torch = pytest.importorskip("torch")
torch_sg = pytest.importorskip("torch.nn.parallel.scatter_gather")

Pair = namedtuple("Pair", ["left", "right"])

NON_TENSORS = [5, "text", None, (1, "a"), [1, [2, 3]], {"k": 1, "j": (2,)}, (), [], {},
               Pair(1, "b")]


@pytest.mark.parametrize("obj", NON_TENSORS, ids=repr)
def test_non_tensors_are_repeated_per_device_as_pytorch_walks_them(obj):
    assert scatter(obj, [0, 1]) == torch_sg.scatter(obj, [0, 1])


def test_namedtuples_keep_their_type():
    out = scatter(Pair(1, "b"), [0, 1, 2])
    assert all(type(p) is Pair for p in out) and len(out) == 3


@pytest.mark.parametrize("inputs, kwargs", [((1,), {"a": 2}), ((), {"a": 2}), ((1, 2), {}),
                                            ((), {})])
def test_scatter_kwargs_pads_the_shorter_side(inputs, kwargs):
    assert scatter_kwargs(inputs, kwargs, [0, 1]) == torch_sg.scatter_kwargs(inputs, kwargs,
                                                                              [0, 1])


@pytest.mark.parametrize("target", ["cpu", "cpu:0"])
def test_scattering_a_tensor_to_the_cpu_is_refused(target):
    with pytest.raises(ValueError, match="Expected a non cpu device"):
        scatter(tensorlib.arange(4.0), [target])
    with pytest.raises(ValueError, match="Expected a non cpu device"):
        torch_sg.scatter(torch.arange(4.0), [target])


@pytest.mark.skipif(tensorlib.accelerator.is_available(), reason="an accelerator is present")
def test_integer_targets_need_an_accelerator():
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        scatter(tensorlib.arange(4.0), [0])


def test_gathering_cpu_tensors_is_refused():
    with pytest.raises(AssertionError, match="not implemented for CPU tensors"):
        gather([tensorlib.ones(2), tensorlib.ones(2)], -1)
    with pytest.raises(AssertionError, match="not implemented for CPU tensors"):
        torch_sg.gather([torch.ones(2), torch.ones(2)], -1)
    assert gather([None, None], -1) is None


@pytest.mark.skipif(not tensorlib.accelerator.is_available(), reason="needs an accelerator")
def test_scatter_then_gather_round_trips_with_gradients():
    kind = tensorlib.accelerator.current_accelerator().type
    x = tensorlib.arange(10.0, requires_grad=True)
    parts = scatter(x, [0, 0, 0])
    assert [p.shape[0] for p in parts] == [4, 4, 2]
    assert all(p.device.type == kind for p in parts)
    back = gather([p * 2 for p in parts], -1)
    assert back.device.type == "cpu" and back.tolist() == (x * 2).tolist()
    back.sum().backward()
    assert x.grad.tolist() == [2.0] * 10
