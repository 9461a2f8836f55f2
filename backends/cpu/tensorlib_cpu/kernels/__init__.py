"""Every kernel the CPU backend provides, by op name: the one list of what it implements."""
from tensorlib_cpu.kernels import blas, indexing, pointwise, random, reduction


def register(table):
    for module in (pointwise, reduction, blas, indexing, random):
        table.update(module.KERNELS)
