"""Test configuration: the devices that per-device tests run on.

TENSORLIB_TEST_DEVICES=cpu,opencl picks them; by default every available backend is used.
Tests for a device that is not available skip with the backend's reason."""
import os

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None)
settings.load_profile("ci")


def _devices():
    import tensorlib
    wanted = os.environ.get("TENSORLIB_TEST_DEVICES")
    if wanted:
        return [d.strip() for d in wanted.split(",") if d.strip()]
    return tensorlib.backends.available()


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", _devices())


@pytest.fixture(autouse=True)
def _skip_unavailable(request):
    device = request.node.callspec.params.get("device") if hasattr(request.node, "callspec") \
        else None
    if device is None:
        return
    import tensorlib
    reason = tensorlib.backends.why_unavailable(device.split(":")[0])
    if reason:
        pytest.skip(f"device {device} unavailable: {reason}")
