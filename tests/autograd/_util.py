"""Shared helpers for the autograd tests.

Tests that take the `device` fixture (tests/conftest.py) run once per test device: make
every tensor with `device=device` (`leaf(..., device=device)`), and compare on the host
(`npy` and `close` copy to the CPU)."""
import functools

import numpy as np
import pytest

import tensorlib as tl


def leaf(values, dtype=tl.float64, requires_grad=True, device="cpu"):
    if dtype == tl.float64:
        require_float64(device)
    return tl.tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def npy(t):
    return t.detach().cpu().numpy()


def close(t, expected, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(npy(t), np.asarray(expected, dtype=np.float64), rtol=rtol,
                               atol=atol)


def on_device(t, device):
    """Whether tensor t lives on `device` ("opencl" matches opencl:0)."""
    want = tl.device(device)
    got = t.device
    return got.type == want.type and (want.index is None or got.index == want.index)


def assert_on(device, *tensors):
    for t in tensors:
        assert on_device(t, device), f"{t.device} is not {device}"


@functools.lru_cache(maxsize=None)
def _float64_error(device):
    try:
        (tl.ones(2, dtype=tl.float64, device=device) * 3).cpu()
    except (TypeError, RuntimeError) as e:
        return str(e)
    return None


def require_float64(device):
    """Skip (with the device's reason) where the device has no float64."""
    if device == "cpu":
        return
    reason = _float64_error(device)
    if reason:
        pytest.skip(f"{device} has no float64: {reason}")

