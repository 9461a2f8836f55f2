"""torch.utils.checkpoint's helpers: detach_variable, device RNG states, context_fn,
CheckpointFunction, the debug / early-stop switches, CheckpointPolicy and the unsupported
selective checkpointing."""
import contextlib

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.utils import checkpoint as cp


def test_detach_variable():
    a = tl.ones(2, requires_grad=True)
    b = tl.ones(2)
    out = cp.detach_variable((a * 2, b, 3))
    assert out[0].requires_grad and out[0].grad_fn is None
    assert not out[1].requires_grad and out[2] == 3
    with pytest.raises(RuntimeError, match="Got Unsupported input type: list"):
        cp.detach_variable([a])


def test_device_states_round_trip(device):
    x = tl.ones(3, device=device)
    ids, states = cp.get_device_states(x, {"nested": [x]})
    if device == "cpu":
        assert ids == [] and states == []
        return
    assert ids == [x.get_device()] * 2
    first = tl.rand(4, device=device)
    cp.set_device_states(ids[:1], states[:1], device_type=device)
    np.testing.assert_array_equal(tl.rand(4, device=device).cpu().numpy(), first.cpu().numpy())


class _Recorder:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def __enter__(self):
        self.log.append((self.name, tl.is_grad_enabled()))

    def __exit__(self, *exc):
        return False


def test_context_fn_wraps_forward_and_recomputation():
    log = []
    w = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = cp.checkpoint(lambda x: (x * w).sin().sum(), tl.ones(3), use_reentrant=False,
                        context_fn=lambda: (_Recorder(log, "forward"),
                                            _Recorder(log, "recompute")))
    assert log == [("forward", False)]
    out.backward()
    assert log == [("forward", False), ("recompute", True)]
    np.testing.assert_allclose(w.grad.numpy(), np.cos([1.0, 2.0, 3.0]), rtol=1e-6)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        cp.checkpoint(lambda x: x, w, use_reentrant=True,
                      context_fn=lambda: (contextlib.nullcontext(), contextlib.nullcontext()))
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        cp.checkpoint(lambda x: x, w, use_reentrant=True, debug=True)


def test_checkpoint_function_apply():
    w = tl.tensor([0.5, -1.0], requires_grad=True)
    x = tl.tensor([2.0, 3.0], requires_grad=True)
    out = cp.CheckpointFunction.apply(lambda a: (a * w).exp(), True, x)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (w * (x * w).exp()).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), (x * (x * w).exp()).detach().numpy(), rtol=1e-6)


def test_switches_restore_their_values():
    with cp.set_checkpoint_debug_enabled(True):
        assert cp._checkpoint_debug_enabled is True
        with cp.set_checkpoint_early_stop(False):
            assert cp._enable_checkpoint_early_stop is False
    assert cp._checkpoint_debug_enabled is None and cp._enable_checkpoint_early_stop is True


def test_selective_checkpointing():
    torch = pytest.importorskip("torch")
    assert [p.name for p in cp.CheckpointPolicy] == \
        [p.name for p in torch.utils.checkpoint.CheckpointPolicy]
    assert [p.value for p in cp.CheckpointPolicy] == \
        [p.value for p in torch.utils.checkpoint.CheckpointPolicy]
    with pytest.raises(TypeError, match="function or a list"):
        cp.create_selective_checkpoint_contexts(3)
    with pytest.raises(NotImplementedError, match="create_selective_checkpoint_contexts"):
        cp.create_selective_checkpoint_contexts(lambda ctx, op, *a, **k:
                                                cp.CheckpointPolicy.MUST_SAVE)
    assert issubclass(cp.CheckpointError, RuntimeError)


def test_default_device_type_and_backward_validity(device):
    assert cp.DefaultDeviceType.get_device_type() == "cuda"
    x = tl.ones(2, device=device)
    try:
        cp.DefaultDeviceType.set_device_type(device)
        assert cp.DefaultDeviceType.get_device_type() == device
        if device != "cpu":
            ids, states = cp.get_device_states(x)
            first = tl.rand(3, device=device)
            cp.set_device_states(ids, states)
            np.testing.assert_array_equal(tl.rand(3, device=device).cpu().numpy(),
                                          first.cpu().numpy())
    finally:
        cp.DefaultDeviceType._default_device_type = None
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        cp.check_backward_validity((x, 3))
