"""The CUDA backend (PyCUDA). This release detects the driver and GPUs but has no kernels yet,
so it reports itself unavailable with that reason instead of failing later."""
from tensorlib.backends.interface import Backend


class CUDABackend(Backend):
    device_type = "cuda"

    @property
    def install_hint(self):
        """What to install -- shown only while pycuda itself is missing."""
        try:
            import pycuda  # noqa: F401
        except ImportError:
            return 'pip install "tensorlib[cuda]" on a machine with an NVIDIA driver'
        return None

    def unavailable_reason(self):
        try:
            import pycuda.driver as drv
        except ImportError:
            return "pycuda is not installed"
        try:
            drv.init()
            if drv.Device.count() == 0:
                return "no CUDA device was found"
        except Exception as exc:
            return f"the CUDA driver could not be initialised: {exc}"
        return "the CUDA kernels are not implemented in this version of tensorlib"

    def device_count(self):
        try:
            import pycuda.driver as drv
            drv.init()
            return drv.Device.count()
        except Exception:
            return 0


backend = CUDABackend()
