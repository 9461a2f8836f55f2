"""Batched GEMM through numpy's matmul, which calls the BLAS it was built with."""
import numpy as np

from tensorlib._C.tensor_impl import host_array as _h


def matmul(out, a, b):
    o, av, bv = _h(out), _h(a), _h(b)
    if o.shape[0] == 1:             # one GEMM: hand BLAS the 2-D operands directly
        np.matmul(av[0], bv[0], out=o[0])
    else:
        np.matmul(av, bv, out=o)


KERNELS = {"matmul": matmul}
