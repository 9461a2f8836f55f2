"""The OpenCL code generator for `tensorlib.compile`: a fused elementwise chain as one
kernel, one work-item per element (offsets from the collapsed sizes and strides in a meta
buffer), its body from the shared generator (`tensorlib.codegen.fused`) in the OpenCL
dialect, built and cached by the device's compiler like every other kernel."""
import hashlib

import numpy as np

from tensorlib.codegen.fused import body
from tensorlib.codegen.templates import _decompose

from tensorlib_opencl.dialect import DIALECT as D


def source(spec, name):
    helpers, lines = body(D, spec, lambda k, inner: f"j{k}")
    params = ["const i64 n", f"{D.global_}const i64* meta"]
    for k, (dt, _) in enumerate(spec.operands):
        params += [f"{D.ptr(dt)} p{k}", f"const i64 off{k}"]
    params += [f"const {D.compute(st.out_dt)} sc{st.value}" for st in spec.steps
               if st.op == "fill"]
    nops = len(spec.operands)
    offsets = [(str(k), f"(meta + 1 + nd * {k + 1})") for k in range(nops)]
    text = (f"  const int nd = (int)meta[0];\n"
            f"  const i64 i = {D.global_id(0)};\n  if (i < n) {{\n"
            f"    i64 {', '.join(f'j{k} = off{k}' for k in range(nops))};\n"
            + _decompose(D, "i", "nd", "(meta + 1)", offsets)
            + "".join(f"    {ln}\n" for ln in lines) + "  }")
    dtypes = tuple(dt for dt, _ in spec.operands)
    return D.program([helpers, D.kernel(name, params, text)], dtypes)


class FusedKernel:
    """A built fused kernel for one iteration shape; call with the operand tensors."""

    def __init__(self, spec, sizes, strides):
        self.spec = spec
        self.n = 1
        for s in sizes:
            self.n *= s
        self.meta = (len(sizes),) + tuple(sizes) + tuple(s for st in strides for s in st)
        self.scalar_types = [np.dtype("uint8" if st.out_dt == "bool" else st.out_dt).type
                             for st in spec.steps if st.op == "fill"]
        self.name = "fused_" + hashlib.sha1(spec.key().encode()).hexdigest()[:16]
        self.source = None

    def _kernel(self, dk):
        if self.source is None:
            from tensorlib.compiler import logs
            self.source = source(self.spec, self.name)
            logs.log("output_code", f"fused OpenCL kernel:\n{self.source}")
        if any(dt == "float64" for dt, _ in self.spec.operands) and not dk.dev.fp64:
            raise TypeError(f"float64 is not supported on {dk.label} ({dk.dev.name}): the "
                            f"device lacks cl_khr_fp64. Use float32 on this device.")
        return dk.compiler.kernels(self.source, (self.name,))[self.name]   # cached by source

    def __call__(self, tensors, scalars=()):
        from tensorlib.codegen.primitives import _dk
        dk = _dk(*tensors)
        kernel = self._kernel(dk)
        if self.n == 0:
            return
        args = []
        for t in tensors:
            args += [t._storage.handle, t._offset]
        args += [ty(v) for ty, v in zip(self.scalar_types, scalars)]
        dk.launch1d(kernel, self.n, self.n, dk.meta(self.meta), *args)
