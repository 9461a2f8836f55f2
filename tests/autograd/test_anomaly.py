"""detect_anomaly / set_detect_anomaly: a NaN produced in backward names the node and the
forward op's stack. The NaN checks run on every test device (the gradient is inspected
where it lives); the mode switches are CPU-only."""
import pytest

import tensorlib as tl
from tensorlib import autograd

from ._util import leaf


@pytest.fixture(autouse=True)
def _off_after():
    yield
    autograd.set_detect_anomaly(False)


def test_sqrt_at_zero_times_zero(device):
    x = leaf([0.0, 1.0], device=device)
    with autograd.detect_anomaly():
        y = tl.sqrt(x) * 0                      # inf * 0 -> nan in SqrtBackward0
        with pytest.raises(RuntimeError, match="SqrtBackward0") as err:
            y.sum().backward()
    msg = str(err.value)
    assert "nan" in msg
    assert "test_anomaly.py" in msg             # the forward call site
    assert "y = tl.sqrt(x) * 0" in msg


def test_zero_over_zero(device):
    x = leaf([0.0, 1.0], device=device)
    with autograd.detect_anomaly():
        y = x / x
        with pytest.raises(RuntimeError, match="DivBackward0.*nan"):
            y.sum().backward()


def test_without_anomaly_nan_passes_silently(device):
    x = leaf([0.0, 1.0], device=device)
    y = tl.sqrt(x) * 0
    y.sum().backward()
    assert bool(x.grad.isnan().any())


def test_nodes_made_outside_anomaly_mode_have_no_trace():
    x = leaf([0.0])
    y = tl.sqrt(x) * 0
    with autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="no forward trace"):
            y.sum().backward()


def test_set_detect_anomaly_call_and_context():
    from tensorlib.autograd import anomaly_mode
    autograd.set_detect_anomaly(True)
    assert anomaly_mode.is_enabled()
    autograd.set_detect_anomaly(False)
    assert not anomaly_mode.is_enabled()
    with autograd.set_detect_anomaly(True):
        assert anomaly_mode.is_enabled()
        with autograd.set_detect_anomaly(False):
            assert not anomaly_mode.is_enabled()
        assert anomaly_mode.is_enabled()
    assert not anomaly_mode.is_enabled()


def test_anomaly_in_custom_function():
    class Bad(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    with autograd.detect_anomaly():
        y = Bad.apply(leaf([1.0]))
        with pytest.raises(RuntimeError, match="BadBackward"):
            y.sum().backward()


def test_anomaly_with_create_graph_and_no_nan():
    x = leaf([0.5])
    with autograd.detect_anomaly():
        (g,) = autograd.grad(tl.sin(x).sum(), x, create_graph=True)
        (g2,) = autograd.grad(g.sum(), x)
    assert abs(g2.item() + 0.479425538604203) < 1e-12


def test_check_nan_false_records_but_does_not_check():
    from tensorlib.autograd import anomaly_mode
    x = leaf([0.0])
    with autograd.set_detect_anomaly(True, check_nan=False):
        y = tl.sqrt(x) * 0
        assert y.grad_fn._forward_trace is not None
        y.sum().backward()                       # no error
    assert not anomaly_mode.is_enabled()
    assert bool(x.grad.isnan().any())


def test_detect_anomaly_decorator_switches_only_inside():
    from tensorlib.autograd import anomaly_mode

    @autograd.detect_anomaly()
    def f():
        return anomaly_mode.is_enabled()

    assert not anomaly_mode.is_enabled()
    assert f() is True
    assert not anomaly_mode.is_enabled()
