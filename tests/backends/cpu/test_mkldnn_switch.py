"""torch.backends.mkldnn is a true switch: `enabled = False` (or `flags(enabled=False)`) takes
oneDNN off the CPU backend's convolutions and float32 GEMM in this process, and turning it back
on restores what ran before; results stay PyTorch's either way."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn.functional as F

onednn = pytest.importorskip("tensorlib_cpu.onednn")
gemm = pytest.importorskip("tensorlib_cpu.gemm")
mkldnn = tensorlib.backends.mkldnn

RNG = np.random.default_rng(33)


@pytest.fixture
def blas_put_back():
    before = gemm.LIBRARY
    yield
    gemm.use_blas(before)


def test_is_available_says_whether_the_cpu_backend_has_onednn():
    expected = onednn.find() is not None and not onednn._off_by_environment()
    assert mkldnn.is_available() is expected
    with mkldnn.flags(enabled=False):
        assert mkldnn.is_available() is expected      # built-with, not switched-on


def test_assigning_enabled_switches_onednn_off_and_back(blas_put_back):
    if not mkldnn.is_available():
        pytest.skip("oneDNN is not installed (pip install onednn-cpu-gomp)")
    gemm.use_blas("onednn")
    onednn.use(True)
    mkldnn.enabled = False
    try:
        assert mkldnn.enabled is False
        assert onednn.library() is None and gemm.LIBRARY != "onednn"
    finally:
        mkldnn.enabled = True
    assert onednn.library() is not None and gemm.LIBRARY == "onednn"


def test_flags_context_puts_the_previous_state_back():
    with mkldnn.flags(enabled=False):
        assert mkldnn.enabled is False and onednn.library() is None
        with mkldnn.flags(enabled=True, deterministic=True):
            assert mkldnn.enabled is True and mkldnn.deterministic is True
        assert mkldnn.enabled is False and mkldnn.deterministic is False
    assert mkldnn.enabled is True
    assert (onednn.library() is not None) is mkldnn.is_available()


def test_a_blas_that_was_not_onednn_stays_after_re_enabling(blas_put_back):
    gemm.use_blas("openblas")
    with mkldnn.flags(enabled=False):
        pass
    assert gemm.LIBRARY == "openblas"


def test_conv_and_matmul_match_torch_with_onednn_off():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 9, 9)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    a = RNG.standard_normal((33, 17)).astype(np.float32)
    expected_conv = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), padding=1)
    expected_mm = torch.tensor(a) @ torch.tensor(a).T
    for on in (False, True):
        with mkldnn.flags(enabled=on):
            y = F.conv2d(tensorlib.tensor(x), tensorlib.tensor(w), padding=1)
            m = tensorlib.tensor(a) @ tensorlib.tensor(a).T
        np.testing.assert_allclose(y.numpy(), expected_conv.numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(m.numpy(), expected_mm.numpy(), rtol=1e-4, atol=1e-4)
