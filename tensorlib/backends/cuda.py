"""torch.backends.cuda for PyTorch programs: matmul precision switches and SDPA toggles.

`matmul.allow_tf32` is the legacy face of `set_float32_matmul_precision` (True means 'high',
False 'highest'), as in PyTorch. The CUDA backend's cuBLAS GEMM reads it on every call: float32
products run in TF32 (CUBLAS_COMPUTE_32F_FAST_TF32) when it is True or the precision is 'high'
or 'medium', in full float32 otherwise; the CPU and OpenCL backends always compute float32 in
full precision. The reduced-precision-reduction flags and the SDPA toggles are recorded, not
acted on."""
import contextlib

__all__ = ["matmul", "is_built", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp", "sdp_kernel",
           "preferred_linalg_library", "preferred_blas_library"]


class _MatmulFlags:
    """torch.backends.cuda.matmul: unknown names raise AttributeError, as PyTorch's."""
    __slots__ = ("_fp16_reduction", "_bf16_reduction")

    def __init__(self):
        self._fp16_reduction = True
        self._bf16_reduction = True

    @property
    def allow_tf32(self):
        from tensorlib import _global_flags
        return _global_flags.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        from tensorlib import _global_flags
        _global_flags.set_float32_matmul_precision("high" if value else "highest")

    @property
    def allow_fp16_reduced_precision_reduction(self):
        return self._fp16_reduction

    @allow_fp16_reduced_precision_reduction.setter
    def allow_fp16_reduced_precision_reduction(self, value):
        self._fp16_reduction = bool(value)

    @property
    def allow_bf16_reduced_precision_reduction(self):
        return self._bf16_reduction

    @allow_bf16_reduced_precision_reduction.setter
    def allow_bf16_reduced_precision_reduction(self, value):
        self._bf16_reduction = bool(value)

    def __getattr__(self, name):
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name not in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                        "allow_bf16_reduced_precision_reduction") + self.__slots__:
            raise AttributeError(f"Unknown attribute {name}")
        object.__setattr__(self, name, value)


matmul = _MatmulFlags()


def is_built():
    """Whether this tensorlib carries a CUDA backend (the `cuda` plugin is installed), as
    PyTorch's says whether it was built with CUDA; torch.cuda.is_available() is the runtime
    question."""
    from tensorlib.backends._loader import LOADER
    return "cuda" in LOADER.records and LOADER.records["cuda"].status != "broken"


_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_switch(kind):
    def enabled():
        return _sdp[kind]

    def enable(value):
        _sdp[kind] = bool(value)
    enabled.__name__, enable.__name__ = f"{kind}_sdp_enabled", f"enable_{kind}_sdp"
    enabled.__doc__ = f"Whether SDPA may use the {kind} kernel (a recorded switch)."
    enable.__doc__ = f"Allow or forbid SDPA's {kind} kernel (recorded; tensorlib has one path)."
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _sdp_switch("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_switch("mem_efficient")
math_sdp_enabled, enable_math_sdp = _sdp_switch("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_switch("cudnn")


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """The deprecated context that sets the four SDPA switches for a block."""
    saved = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(saved)


def preferred_linalg_library(backend=None):
    """PyTorch picks cuSOLVER/MAGMA here; tensorlib has one linalg path: 'default'."""
    return "default"


def preferred_blas_library(backend=None):
    return "default"
