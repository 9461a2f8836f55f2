"""tensorlib.backends as PyTorch programs read torch.backends (cudnn, cuda, mps, mkldnn, mkl,
openmp), the global numerics switches, set_default_device and tensorlib.accelerator: names,
defaults and errors against torch, and the plugin registry still answering beside them."""
import pytest

import tensorlib

torch = pytest.importorskip("torch")


@pytest.fixture
def restore_switches():
    from tensorlib import _global_flags
    saved = (_global_flags._deterministic, _global_flags._warn_only,
             _global_flags._matmul_precision)
    yield
    tensorlib.use_deterministic_algorithms(saved[0], warn_only=saved[1])   # tells the backends
    _global_flags._matmul_precision = saved[2]
    tensorlib.set_default_device(None)


def test_cudnn_switches_and_flags():
    cudnn = tensorlib.backends.cudnn
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(cudnn, name) == getattr(torch.backends.cudnn, name)
    assert cudnn.is_available() is False and cudnn.version() is None
    cudnn.benchmark = True
    try:
        assert tensorlib.backends.cudnn.benchmark is True
        with cudnn.flags(enabled=False, deterministic=True):
            assert cudnn.deterministic and not cudnn.enabled and not cudnn.benchmark
        assert cudnn.benchmark and cudnn.enabled and not cudnn.deterministic
    finally:
        cudnn.benchmark = False


def test_matmul_precision_is_tied_to_allow_tf32(restore_switches):
    matmul = tensorlib.backends.cuda.matmul
    assert tensorlib.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    assert matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32 is False
    tensorlib.set_float32_matmul_precision("high")
    assert matmul.allow_tf32 is True
    tensorlib.set_float32_matmul_precision("medium")
    assert matmul.allow_tf32 is True and tensorlib.get_float32_matmul_precision() == "medium"
    matmul.allow_tf32 = False
    assert tensorlib.get_float32_matmul_precision() == "highest"
    with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
        tensorlib.set_float32_matmul_precision("fastest")
    assert tensorlib.get_float32_matmul_precision() == "highest"
    assert matmul.allow_fp16_reduced_precision_reduction is True
    assert matmul.allow_bf16_reduced_precision_reduction is True
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf64"):
        matmul.allow_tf64 = True
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf64"):
        matmul.allow_tf64


def test_availability_answers():
    b = tensorlib.backends
    assert b.mps.is_available() is False and b.mps.is_built() is False
    assert isinstance(b.mkldnn.is_available(), bool) and b.mkldnn.enabled is True
    assert b.mkl.is_available() is False          # numpy's BLAS here is OpenBLAS
    assert b.openmp.is_available() is True        # the CPU kernels are built with -fopenmp
    assert isinstance(b.cuda.is_built(), bool)
    assert b.cuda.flash_sdp_enabled() is True
    with b.cuda.sdp_kernel(enable_flash=False):
        assert b.cuda.flash_sdp_enabled() is False and b.cuda.math_sdp_enabled() is True
    assert b.cuda.flash_sdp_enabled() is True


def test_plugin_registry_still_answers():
    b = tensorlib.backends
    assert "cpu" in b.available()
    assert b.why_unavailable("cpu") is None
    assert b.get("cpu").device_type == "cpu"


def test_deterministic_algorithms(restore_switches):
    assert tensorlib.are_deterministic_algorithms_enabled() is \
        torch.are_deterministic_algorithms_enabled()
    tensorlib.use_deterministic_algorithms(True, warn_only=True)
    assert tensorlib.are_deterministic_algorithms_enabled()
    assert tensorlib.is_deterministic_algorithms_warn_only_enabled()
    assert tensorlib.get_deterministic_debug_mode() == 1
    tensorlib.set_deterministic_debug_mode("error")
    assert tensorlib.get_deterministic_debug_mode() == 2
    tensorlib.set_deterministic_debug_mode(0)
    assert not tensorlib.are_deterministic_algorithms_enabled()
    with pytest.raises(TypeError, match="must be bool, not int"):
        tensorlib.use_deterministic_algorithms(1)
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        tensorlib.set_deterministic_debug_mode("x")


def test_default_device(restore_switches):
    assert tensorlib.get_default_device() == tensorlib.device("cpu")
    assert str(tensorlib.get_default_device()) == str(torch.get_default_device()) == "cpu"
    if tensorlib.backends.why_unavailable("opencl"):
        pytest.skip("opencl unavailable: the default device can only be cpu here")
    tensorlib.set_default_device("opencl")
    assert tensorlib.get_default_device().type == "opencl"
    for t in (tensorlib.ones(2), tensorlib.zeros(1), tensorlib.tensor([1, 2]),
              tensorlib.arange(3), tensorlib.randn(2), tensorlib.empty(2),
              tensorlib.linspace(0, 1, 3), tensorlib.full((1,), 2.0)):
        assert t.device.type == "opencl"
    assert tensorlib.ones(2, device="cpu").device.type == "cpu"
    tensorlib.set_default_device(None)
    assert tensorlib.ones(1).device.type == "cpu"


def test_default_device_must_exist(restore_switches):
    with pytest.raises(RuntimeError):
        tensorlib.set_default_device("nosuchdevice")
    assert tensorlib.get_default_device().type == "cpu"


def _accelerator_names():
    """Backends with a device that is not the host CPU (PoCL's OpenCL CPU device is not)."""
    names = []
    for name in tensorlib.backends.available():
        backend = tensorlib.backends.get(name)
        if name != "cpu" and any(not backend.runs_on_host(i)
                                 for i in range(backend.device_count())):
            names.append(name)
    return names


def test_accelerator():
    acc = tensorlib.accelerator
    names = _accelerator_names()
    assert acc.is_available() is bool(names)
    if not names:
        assert acc.current_accelerator() is None and acc.device_count() == 0
        assert acc.best_device() == "cpu"
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            acc.synchronize()
        return
    kind = acc.current_accelerator().type
    assert kind in names and acc.device_count() >= 1
    index = acc.current_device_index()
    assert acc.best_device() == f"{kind}:{index}"
    x = tensorlib.ones(3, device=acc.best_device()) * 2
    acc.synchronize()
    assert x.sum().item() == 6.0
    with pytest.raises(RuntimeError, match="does not exist"):
        acc.set_device_index(tensorlib.backends.get(kind).device_count())


def test_pocl_is_not_an_accelerator_and_examples_agree():
    """The examples' device choice is the accelerator's (one function decides both)."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "common.py"
    spec = importlib.util.spec_from_file_location("examples_common", path)
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    assert common.best_device() == tensorlib.accelerator.best_device()
    if "opencl" in tensorlib.backends.available():
        opencl = tensorlib.backends.get("opencl")
        hosts = [i for i in range(opencl.device_count()) if opencl.runs_on_host(i)]
        if hosts:
            assert f"opencl:{hosts[0]}" != tensorlib.accelerator.best_device()


def test_torch_style_names_exist():
    for name in ("use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
                 "set_float32_matmul_precision", "get_float32_matmul_precision",
                 "set_default_device", "get_default_device"):
        assert callable(getattr(tensorlib, name)) and callable(getattr(torch, name))
