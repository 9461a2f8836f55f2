"""PyTorch's older top-level switches and build facts: the anomaly-mode and per-device
autocast setters of torch < 2.4 (each the setting tensorlib.autograd / tensorlib.amp keep),
and has_mkl / has_lapack / has_openmp / has_spectral, true of this install."""
import warnings

from tensorlib import backends as _backends

__all__ = ["get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "has_lapack", "has_mkl",
           "has_openmp", "has_spectral", "is_anomaly_check_nan_enabled", "is_anomaly_enabled",
           "is_autocast_cpu_enabled", "set_anomaly_enabled", "set_autocast_cpu_dtype",
           "set_autocast_cpu_enabled", "set_autocast_gpu_dtype"]

has_mkl = _backends.mkl.is_available()      # numpy's BLAS is MKL
has_lapack = True                            # the decompositions call LAPACK through numpy/scipy
has_openmp = _backends.openmp.is_available()
has_spectral = True                          # tensorlib.fft is built in


def is_anomaly_enabled():
    from tensorlib.autograd import anomaly_mode
    return anomaly_mode.is_enabled()


def is_anomaly_check_nan_enabled():
    """The check_nan flag itself (PyTorch's answer is True by default, even while anomaly
    detection is off)."""
    from tensorlib.autograd import anomaly_mode
    return anomaly_mode._check_nan


def set_anomaly_enabled(enabled, check_nan=True):
    from tensorlib.autograd import anomaly_mode
    anomaly_mode._enabled, anomaly_mode._check_nan = bool(enabled), bool(check_nan)
    anomaly_mode._sync()


def _deprecated(old, new):
    warnings.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled():
    from tensorlib.amp import autocast_mode
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return autocast_mode.is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    from tensorlib.amp import autocast_mode
    _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)")
    autocast_mode.set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    from tensorlib.amp import autocast_mode
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return autocast_mode.get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    from tensorlib.amp import autocast_mode
    _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)")
    autocast_mode.set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    from tensorlib.amp import autocast_mode
    _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')")
    return autocast_mode.get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    from tensorlib.amp import autocast_mode
    _deprecated("set_autocast_gpu_dtype", "set_autocast_dtype('cuda', dtype)")
    autocast_mode.set_autocast_dtype("cuda", dtype)
