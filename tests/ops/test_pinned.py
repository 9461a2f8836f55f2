"""Pinned memory and the device-facing Tensor methods on a machine without an accelerator, as
PyTorch's CPU build answers them (the CUDA side runs in tests/backends/test_cuda_glue.py over
the fake driver)."""
import warnings

import pytest

import tensorlib as tl
from tensorlib.ops.pinned import pinning_backend

pytestmark = pytest.mark.skipif(pinning_backend() is not None,
                                reason="an accelerator with pinned memory is present")

FACTORY_CALLS = {
    "empty": ((2,),), "empty_strided": ((2,), (1,)), "zeros": ((2,),), "ones": ((2,),),
    "full": ((2,), 1.5), "tensor": ([1.0, 2.0],), "arange": (3,), "linspace": (0, 1, 3),
    "logspace": (0, 1, 3), "eye": (2,), "rand": (2,), "randn": (2,), "randint": (3, (2,)),
    "randperm": (3,), "scalar_tensor": (1.0,), "tril_indices": (3, 3), "triu_indices": (3, 3),
    "empty_like": "like", "zeros_like": "like", "ones_like": "like", "rand_like": "like",
    "randn_like": "like", "full_like": "like_fill", "randint_like": "like_high",
}


def _args(name):
    spec = FACTORY_CALLS[name]
    x = tl.ones(2)
    if isinstance(spec, str):
        return {"like": (x,), "like_fill": (x, 2.0), "like_high": (x, 5)}[spec]
    return spec


@pytest.mark.parametrize("name", sorted(FACTORY_CALLS))
def test_factories_take_pin_memory(name):
    fn = getattr(tl, name)
    plain = fn(*_args(name), pin_memory=False)
    assert not plain.is_pinned()
    with pytest.raises(RuntimeError, match="no pinned memory allocator is available"):
        fn(*_args(name), pin_memory=True)


def test_factory_errors_match_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as ours:
        tl.zeros(2, pin_memory=True)
    with pytest.raises(RuntimeError) as theirs:
        torch.zeros(2, pin_memory=True)
    assert str(ours.value) == str(theirs.value)


def test_pin_memory_without_an_accelerator(device):
    x = tl.ones(3, device=device)
    assert x.is_pinned() is False
    if device == "cpu":
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            x.pin_memory()
    else:
        with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
            x.pin_memory()
    assert (x + 1).tolist() == [2.0, 2.0, 2.0]          # still usable


def test_non_blocking_copies_are_plain_without_pinned_memory(device):
    x = tl.arange(4, dtype=tl.float32)
    y = x.to(device, non_blocking=True)
    assert y.device.type == device and y.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
    z = tl.empty(4, device=device)
    z.copy_(x, non_blocking=True)
    assert z.cpu().tolist() == x.tolist()
    assert y.to("cpu", non_blocking=True).tolist() == x.tolist()


def test_to_takes_non_blocking_and_copy_positionally():
    x = tl.ones(2)
    assert x.to("cpu", tl.float32, True) is x             # non_blocking only: no copy
    copied = x.to("cpu", tl.float32, True, True)          # copy=True
    assert copied is not x and copied.tolist() == x.tolist()
    assert x.to(tl.float64, False, True).dtype == tl.float64


def test_cuda_without_cuda_raises_runtime_error():
    with pytest.raises(RuntimeError, match="cuda"):
        tl.ones(2).cuda()


def test_record_stream_checks_its_argument():
    with pytest.raises(TypeError, match="tensorlib.cuda.Stream"):
        tl.ones(2).record_stream(None)


def test_dataloader_pin_memory_warns_as_torch_and_still_loads():
    data = tl.utils.data.TensorDataset(tl.arange(6.0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        batches = [b[0].tolist() for b in tl.utils.data.DataLoader(data, batch_size=3,
                                                                   pin_memory=True)]
    assert batches == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert any("no accelerator is found" in str(w.message) for w in caught)
