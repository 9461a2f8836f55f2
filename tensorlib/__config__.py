"""torch.__config__: the build and threading report programs read at import (PyTorch Geometric
looks for 'USE_MKL=OFF' in `show()`). tensorlib's report names the libraries it really runs
on, gathered as `tensorlib info` gathers them; it claims no PyTorch build flags."""
import os
import platform


def show():
    """The libraries behind tensorlib's CPU kernels, one `  - ` line each."""
    import numpy as np
    import tensorlib
    from tensorlib import _info
    cpu = _info._cpu_libraries()
    blas = _info._numpy_blas()
    lines = [f"tensorlib {tensorlib.__version__} built with:",
             f"  - Python {platform.python_version()}",
             f"  - NumPy {np.__version__}" + (f" (BLAS {blas})" if blas else ""),
             f"  - GEMM: {cpu['gemm']}",
             f"  - conv2d: {cpu['conv2d']}"]
    return "\n".join(lines) + "\n"


def parallel_info():
    """The thread counts tensorlib's CPU kernels and inter-op work use."""
    import tensorlib
    env = "\n".join(f"\t{name} : {os.environ.get(name, '[not set]')}"
                    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"))
    return (f"tensorlib parallel settings:\n"
            f"\tget_num_threads() : {tensorlib.get_num_threads()}\n"
            f"\tget_num_interop_threads() : {tensorlib.get_num_interop_threads()}\n"
            f"os.cpu_count() : {os.cpu_count()}\n"
            f"Environment variables:\n{env}\n")
