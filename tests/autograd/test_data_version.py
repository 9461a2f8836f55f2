"""`.data` is a detached alias with its own version counter (PyTorch's rule): writing scratch
space through it is invisible to the saved-tensor check, while `detach()` shares the counter and
the check still catches a write through it."""
import pytest

import tensorlib


def test_write_through_data_is_not_a_version_bump(device):
    a = tensorlib.ones(3, device=device, requires_grad=True)
    scratch = tensorlib.zeros(3, device=device)
    product = a * scratch                    # saves scratch for a's gradient
    scratch.data[0] = 5.0
    assert scratch._version == 0
    product.sum().backward()
    assert a.grad.cpu().tolist() == [5.0, 0.0, 0.0]     # the gradient sees the new value


def test_write_through_detach_is_still_caught(device):
    a = tensorlib.ones(3, device=device, requires_grad=True)
    scratch = tensorlib.zeros(3, device=device)
    product = a * scratch
    scratch.detach()[0] = 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        product.sum().backward()


def test_data_shares_memory_and_outlives_its_source(device):
    x = tensorlib.arange(4.0, device=device)
    alias = x.data
    alias.add_(1)
    assert x.cpu().tolist() == [1.0, 2.0, 3.0, 4.0]
    del x
    assert alias.cpu().tolist() == [1.0, 2.0, 3.0, 4.0]
