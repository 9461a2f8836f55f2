"""Building OpenCL programs: an in-memory cache per device (source -> kernels) over the
content-addressed disk cache of `tensorlib.codegen.cache` (program binaries). A build failure
raises CompileError carrying the driver's log and the numbered source."""
import re

import numpy as np

from tensorlib.codegen.cache import DiskCache, make_key

_SCALARS = {"i64": np.int64, "long": np.int64, "u64": np.uint64, "ulong": np.uint64,
            "int": np.int32, "u32": np.uint32, "uint": np.uint32, "short": np.int16,
            "ushort": np.uint16, "char": np.int8, "uchar": np.uint8, "float": np.float32,
            "double": np.float64}
_SIGNATURE = re.compile(r"__kernel\s+void\s+(\w+)\s*\(([^)]*)\)")


class CompileError(RuntimeError):
    """An OpenCL program failed to build: the message has the log and the numbered source."""

    def __init__(self, device, log, source, options=""):
        numbered = "\n".join(f"{i:4d} | {line}" for i, line in enumerate(source.splitlines(), 1))
        super().__init__(f"OpenCL build failed on {device} (options: {options!r}).\n"
                         f"--- build log ---\n{log.strip()}\n--- source ---\n{numbered}")
        self.log, self.source = log, source


def arg_dtypes(source):
    """{kernel name: [numpy dtype or None (pointer)]} from the kernel signatures."""
    found = {}
    for name, params in _SIGNATURE.findall(source):
        types = []
        for p in params.split(","):
            words = p.replace("const", " ").split()
            types.append(None if "*" in p else _SCALARS[words[-2]])
        found[name] = types
    return found


class Compiler:
    def __init__(self, dev, label):
        self.dev, self.label = dev, label
        self.memory = {}
        self.disk = DiskCache()
        self.builds = 0             # programs compiled from source by this process
        self.memory_hits = 0

    def _from_source(self, source, options):
        cl = self.dev.cl
        prg = cl._cl._Program(self.dev.context, source)
        try:
            prg.build(options.encode(), [self.dev.device])
        except cl.Error as exc:
            try:
                log = prg.get_build_info(self.dev.device, cl.program_build_info.LOG)
            except Exception:
                log = ""
            raise CompileError(f"{self.label} ({self.dev.describe()})", log or str(exc), source,
                               options) from None
        self.builds += 1
        return prg

    def program(self, source, options=""):
        cl = self.dev.cl
        key = make_key("opencl", self.dev.identity, options, source)
        binary = self.disk.get(key)
        if binary is not None:
            try:
                prg = cl._cl._Program(self.dev.context, [self.dev.device], [binary])
                prg.build(options.encode(), [self.dev.device])
                return prg
            except cl.Error:
                pass                                # stale for this driver: rebuild
        prg = self._from_source(source, options)
        try:
            binaries = prg.get_info(cl.program_info.BINARIES)
            if binaries and binaries[0]:
                self.disk.put(key, bytes(binaries[0]))
        except cl.Error:
            pass
        return prg

    def kernels(self, source, names, options=""):
        """{name: kernel} for the kernels `names` of `source`, built once per device."""
        found = self.memory.get(source)
        if found is not None:
            self.memory_hits += 1
            return found
        prg = self.program(source, options)
        dtypes = arg_dtypes(source)
        found = {}
        for name in names:
            k = self.dev.cl.Kernel(prg, name)
            k.set_scalar_arg_dtypes(dtypes[name])
            found[name] = k
        self.memory[source] = found
        return found
