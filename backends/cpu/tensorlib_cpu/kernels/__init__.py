"""Every kernel the CPU backend provides, by op name: the one list of what it implements."""
from tensorlib_cpu import (activation_kernels, attention_kernels, conv_kernels, copy_kernels,
                           grid_kernels, loss_kernels, norm_kernels, onednn_conv, optim_kernels,
                           pool_kernels, rnn_kernels, scan_kernels, select_kernels,
                           sort_kernels)
from tensorlib_cpu.kernels import (blas, fused, indexing, pointwise, quantized, random, reduction,
                                   sparse)


def register(table):
    # activation_kernels last: its exp and tanh replace pointwise's numpy ones
    for module in (pointwise, reduction, blas, indexing, random, fused, attention_kernels,
                   conv_kernels, grid_kernels, onednn_conv, loss_kernels, norm_kernels,
                   optim_kernels, pool_kernels, rnn_kernels, select_kernels, copy_kernels,
                   scan_kernels, sort_kernels, sparse, quantized, activation_kernels):
        table.update(module.KERNELS)
