"""The op workloads: one numpy input set per workload, fed to every library.

Inputs are made once in numpy and shared (``from_numpy``) so all libraries see identical
data and layout; each workload knows its work (bytes moved or flops) so throughputs are
comparable, and its numpy result doubles as the reference that proves the op really ran.

Every input starts on a 64-byte line (`on_lines`), as the libraries' own factories place large
tensors. Left to numpy, an input's offset within its line depended on each process's heap
history, so the same row read A on a line and B 32 bytes past one in one library's process and
the reverse in the other's: products whose B rows straddle lines ran ~9% slower in either
library, which showed up as a per-process coin toss in the ratios."""
import numpy as np

from tensorlib._bench.registry import register_suite

__all__ = ["Workload", "workloads", "LIBRARIES", "on_lines"]

LIBRARIES = ("tensorlib", "torch", "numpy")
F32 = 4  # bytes per float32
LINE = 64  # bytes


def on_lines(array):
    """A C-contiguous copy of `array` whose data starts on a 64-byte line."""
    raw = np.empty(array.nbytes + LINE, np.uint8)
    skip = -raw.ctypes.data % LINE
    out = raw[skip:skip + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


def _size_name(n):
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


class Workload:
    """One benchmark: inputs, the op per library, and its work for throughput.

    `op(lib, *inputs)` returns a zero-argument callable computing the result with that
    library's spelling; `work` is bytes read+written (unit GB/s), flops (GFLOP/s), or None
    when only the per-call overhead matters."""

    kind, mode, libraries = "op", "eager", LIBRARIES

    def __init__(self, name, family, description, shapes, op, work=None, unit=None,
                 rtol=1e-5, atol=1e-6):
        self.name, self.family, self.description = name, family, description
        self.shapes, self._op, self.work, self.unit = shapes, op, work, unit
        self.rtol, self.atol = rtol, atol

    def inputs(self, seed=0):
        rng = np.random.default_rng(seed)
        return [on_lines(rng.standard_normal(s, dtype=np.float32)) for s in self.shapes]

    def op(self, lib, *args):
        return self._op(lib, *args)

    def prepare(self, library, module, device):
        """(step, check) for one library: the same inputs on `device`, the numpy float64
        result as the reference."""
        arrays = self.inputs()
        ref = np.asarray(self.op("numpy", *arrays)(), dtype=np.float64)
        if library == "numpy":
            args, to_numpy = arrays, np.asarray
        else:
            args = [module.from_numpy(a).to(device) for a in arrays]
            to_numpy = lambda r: r.cpu().numpy()  # noqa: E731
        step = self.op(library, *args)

        def check():
            got = np.asarray(to_numpy(step()))
            if got.shape != ref.shape:
                return f"wrong result vs numpy (shape {got.shape} != {ref.shape})"
            if not np.allclose(got, ref, rtol=self.rtol, atol=self.atol):
                diff = np.max(np.abs(got.astype(np.float64) - ref))
                return f"wrong result vs numpy (max abs diff {diff:.3g})"
            return None
        return step, check

    def throughput(self, seconds):
        if self.work is None or not seconds:
            return None
        return self.work / seconds / 1e9

    def matches(self, name):
        """`--only` accepts an exact workload name, a family (all its sizes) or "op"."""
        return name in (self.name, self.family, self.kind)


def _add(lib, a, b):
    return lambda: a + b


def _mul_scalar(lib, a):
    return lambda: a * 2


def _exp(lib, a):
    return (lambda: np.exp(a)) if lib == "numpy" else (lambda: a.exp())


def _sum(dim):
    def op(lib, a):
        return (lambda: a.sum(axis=dim)) if lib == "numpy" else (lambda: a.sum(dim=dim))
    return op


def _matmul(lib, a, b):
    return lambda: a @ b


# Issue 16's GEMM shapes (m, k, n): the MLP's forward and backward products and square ones
GEMM_SHAPES = ((128, 784, 512), (128, 512, 256), (512, 128, 784), (784, 128, 512),
               (256, 256, 256), (1024, 1024, 1024))


def _gemm_rows(quick):
    shapes = [(m // 8, k // 8, n // 8) for m, k, n in GEMM_SHAPES] if quick else GEMM_SHAPES
    out = [Workload(f"gemm_{m}x{k}x{n}", "gemm", f"({m}x{k}) @ ({k}x{n}) float32",
                    [(m, k), (k, n)], _matmul, work=2 * m * k * n, unit="GFLOP/s",
                    rtol=1e-3, atol=1e-3) for m, k, n in shapes]
    b, n = (8, 16) if quick else (64, 128)
    out.append(Workload(f"bmm_{b}x{n}x{n}", "bmm", f"batched ({b}, {n}, {n}) @ ({b}, {n}, {n}) "
                        f"float32", [(b, n, n), (b, n, n)], _matmul, work=2 * b * n ** 3,
                        unit="GFLOP/s", rtol=1e-3, atol=1e-3))
    return out


@register_suite
def workloads(quick=False):
    """All op workloads in run order; `quick` keeps the same families at tiny sizes."""
    small = 4
    elem = (1 << 10, 1 << 14) if quick else (1 << 20, 1 << 24)
    red = 64 if quick else 4096
    mats = (16, 32, 64) if quick else (256, 1024, 2048)
    out = [
        Workload("small_add", "small_add", f"a + b, {small} float32 (per-call overhead)",
                 [(small,), (small,)], _add),
        Workload("small_mul_scalar", "small_mul_scalar",
                 f"a * 2 with a Python scalar, {small} float32 (per-call overhead)",
                 [(small,)], _mul_scalar),
    ]
    for n in elem:
        out.append(Workload(f"add_{_size_name(n)}", "add", f"a + b, {n} float32",
                            [(n,), (n,)], _add, work=3 * n * F32, unit="GB/s"))
    for n in elem:
        out.append(Workload(f"exp_{_size_name(n)}", "exp", f"a.exp(), {n} float32",
                            [(n,)], _exp, work=2 * n * F32, unit="GB/s", rtol=1e-5))
    for dim in (-1, 0):
        out.append(Workload(f"sum_dim{dim}_{red}x{red}", f"sum_dim{dim}",
                            f"x.sum(dim={dim}), {red}x{red} float32", [(red, red)], _sum(dim),
                            work=(red * red + red) * F32, unit="GB/s", rtol=1e-3, atol=1e-3))
    for n in mats:
        out.append(Workload(f"matmul_{n}", "matmul", f"a @ b, {n}x{n} float32",
                            [(n, n), (n, n)], _matmul, work=2 * n ** 3, unit="GFLOP/s",
                            rtol=1e-3, atol=1e-3))
    return out + _gemm_rows(quick)
