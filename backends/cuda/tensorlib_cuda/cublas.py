"""GEMM through cuBLAS (ctypes over libcublas from the nvidia-cublas wheel or the toolkit):
cublasGemmStridedBatchedEx on row-major tensors, float32 accumulation for the 16-bit floats.
TF32 stays off for float32 unless `tensorlib.backends.cuda.matmul.allow_tf32` is True or
`tensorlib.get_float32_matmul_precision()` is not "highest", as in PyTorch.

Row-major C = A @ B is column-major C^T = B^T @ A^T, so cuBLAS gets (B, A) swapped with
m = N, n = M; an operand whose rows are contiguous goes as OP_N with ld = its row stride, one
whose columns are contiguous as OP_T."""
import ctypes
import glob
import os
import sys

_DTYPES = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 14}     # cudaDataType
_COMPUTE_32F, _COMPUTE_32F_FAST_TF32, _COMPUTE_64F = 68, 77, 70
_OP_N, _OP_T = 0, 1
_GEMM_DEFAULT = -1


def _candidates():
    names = []
    for base in sys.path:
        names += glob.glob(os.path.join(base, "nvidia", "**", "libcublas.so*"), recursive=True)
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root:
            names += glob.glob(os.path.join(root, "lib64", "libcublas.so*"))
    names = [n for n in names if "Lt" not in os.path.basename(n)]
    return sorted(set(names), key=len) + ["libcublas.so"]


def load():
    """(the libcublas CDLL, its path) or (None, why not)."""
    errors = []
    for name in _candidates():
        try:
            return ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL), name
        except OSError as exc:
            errors.append(str(exc))
    return None, "libcublas was not found (pip install nvidia-cublas, or the CUDA toolkit)"


def allow_tf32():
    """PyTorch's switches, read defensively (another module owns them)."""
    import tensorlib
    matmul = getattr(getattr(getattr(tensorlib, "backends", None), "cuda", None), "matmul", None)
    if getattr(matmul, "allow_tf32", False):
        return True
    precision = getattr(tensorlib, "get_float32_matmul_precision", None)
    return precision is not None and precision() in ("high", "medium")


def _operand(t):
    """(op, leading dimension, batch stride) of a (B, R, C) tensor for cuBLAS, or None when
    neither its rows nor its columns are contiguous and non-overlapping."""
    sb, sr, sc = t._strides
    _, R, C = t._sizes
    if (sc == 1 or C == 1) and (R == 1 or sr >= C):
        return _OP_N, (sr if R > 1 else C), sb
    if (sr == 1 or R == 1) and (C == 1 or sc >= R):
        return _OP_T, (sc if C > 1 else R), sb
    return None


class CuBLAS:
    def __init__(self, lib):
        self.lib = lib
        self.handles = {}                 # device index -> cublasHandle_t
        lib.cublasGemmStridedBatchedEx.restype = ctypes.c_int

    def handle(self, dev):
        h = self.handles.get(dev.index)
        if h is None:
            dev.activate()
            h = ctypes.c_void_p()
            status = self.lib.cublasCreate_v2(ctypes.byref(h))
            if status != 0:
                raise RuntimeError(f"cublasCreate failed on cuda:{dev.index} (status {status})")
            self.handles[dev.index] = h
        return h

    def gemm(self, dev, out, a, b):
        """out (B, M, N) = a (B, M, K) @ b (B, K, N); False when the layout or dtype is not
        one cuBLAS takes here (the caller uses the generated GEMM)."""
        dt = out._dtype.name
        if dt not in _DTYPES or a._dtype.name != dt or b._dtype.name != dt:
            return False
        Bn, M, N = out._sizes
        K = a._sizes[2]
        if out._strides[2] != 1 and N != 1:
            return False
        oa, ob = _operand(a), _operand(b)
        if oa is None or ob is None or max(M, N, K) >= 2 ** 31:
            return False
        ldc, sc = (out._strides[1] if M > 1 else N), out._strides[0]
        if ldc < N or (Bn > 1 and sc == 0):
            return False
        h = self.handle(dev)
        self.lib.cublasSetStream_v2(h, ctypes.c_void_p(dev.stream.handle))
        if dt == "float64":
            compute = _COMPUTE_64F
            alpha, beta = ctypes.c_double(1.0), ctypes.c_double(0.0)
        else:
            compute = _COMPUTE_32F_FAST_TF32 if dt == "float32" and allow_tf32() else _COMPUTE_32F
            alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
        size = out._dtype.itemsize
        ptr = lambda t: ctypes.c_void_p(t._storage.handle + t._offset * size)  # noqa: E731
        t = _DTYPES[dt]
        status = self.lib.cublasGemmStridedBatchedEx(
            h, ob[0], oa[0], N, M, K, ctypes.byref(alpha),
            ptr(b), t, ob[1], ctypes.c_longlong(ob[2]),
            ptr(a), t, oa[1], ctypes.c_longlong(oa[2]),
            ctypes.byref(beta), ptr(out), t, ldc, ctypes.c_longlong(sc),
            Bn, compute, _GEMM_DEFAULT)
        if status != 0:
            raise RuntimeError(f"cublasGemmStridedBatchedEx failed on cuda:{dev.index} with "
                               f"status {status} ({dt}, B={Bn} M={M} N={N} K={K})")
        return True
