"""The device adapter both generated-code backends (OpenCL, CUDA) hand to
`tensorlib.codegen.primitives` as `dk` (its docstring lists what `dk` gives). What they share
lives here: programs compiled once per key, layout (meta) buffers cached by value. A backend
subclasses it with its dialect, how a meta buffer is uploaded, and how kernels launch."""
import numpy as np

from tensorlib.codegen import primitives as P

MAX_META_BUFFERS = 4096      # cached layouts per device before the cache starts over


class DeviceAdapter:
    """Per device. Subclasses set `D` (the dialect), `local`, `compute_units` and `is_cpu`,
    and implement `_upload(host_int64_array)`, `launch1d` and `launch`."""

    D = None
    is_cpu = False

    def __init__(self, dev, compiler, label):
        self.dev, self.compiler, self.label = dev, compiler, label
        self._programs = {}
        self._meta = {}

    def _check_key(self, key):
        """Refuse a program the device cannot run (raise), before compiling it."""

    def _before_clearing_meta(self):
        """Launches already queued may still read the buffers about to be dropped."""

    def kernels(self, key):
        found = self._programs.get(key)
        if found is None:
            self._check_key(key)
            source, names = P.source(self.D, key)
            found = self._programs[key] = self.compiler.kernels(source, names)
        return found

    def meta(self, values):
        key = tuple(values)
        buf = self._meta.get(key)
        if buf is None:
            if len(self._meta) > MAX_META_BUFFERS:
                self._before_clearing_meta()
                self._meta.clear()
            buf = self._meta[key] = self._upload(np.array(key, dtype=np.int64))
        return buf

    def _upload(self, host):
        raise NotImplementedError(f"{type(self).__name__} must say how a meta buffer is "
                                  f"uploaded")

    def launch1d(self, kernel, n, *args):
        raise NotImplementedError(f"{type(self).__name__} must implement launch1d")

    def launch(self, kernel, global_size, local_size, *args):
        raise NotImplementedError(f"{type(self).__name__} must implement launch")
