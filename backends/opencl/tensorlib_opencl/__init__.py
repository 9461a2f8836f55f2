"""The OpenCL backend (AMD/Intel GPUs, PoCL on CPUs). This release finds devices but has no
kernels yet, so it reports itself unavailable with that reason instead of failing later."""
from tensorlib.backends.interface import Backend


def _devices():
    """All OpenCL devices over all platforms, in a stable order (platform, then device)."""
    import pyopencl as cl
    found = []
    for platform in sorted(cl.get_platforms(), key=lambda p: p.name):
        try:
            found.extend(platform.get_devices())
        except cl.Error:
            continue
    return found


class OpenCLBackend(Backend):
    device_type = "opencl"

    @property
    def install_hint(self):
        """What to install -- shown only while pyopencl itself is missing."""
        try:
            import pyopencl  # noqa: F401
        except ImportError:
            return ('pip install "tensorlib[opencl-cpu]" for the PoCL CPU driver, or '
                    '"tensorlib[opencl]" with your GPU vendor\'s OpenCL driver')
        return None

    def unavailable_reason(self):
        try:
            import pyopencl  # noqa: F401
        except ImportError:
            return "pyopencl is not installed"
        try:
            if not _devices():
                return "no OpenCL device was found"
        except Exception as exc:
            return f"OpenCL platforms could not be listed: {exc}"
        return "the OpenCL kernels are not implemented in this version of tensorlib"

    def device_count(self):
        try:
            return len(_devices())
        except Exception:
            return 0


backend = OpenCLBackend()
