"""Every kernel the CPU backend provides, by op name: the one list of what it implements."""
from tensorlib_cpu import (activation_kernels, arith_kernels, attention_kernels, clamp_kernels,
                           conv_kernels, copy_kernels, exp_activation_kernels, grid_kernels,
                           loss_kernels, median_kernels, norm_kernels, onednn_conv, optim_kernels,
                           piecewise_kernels, pool_kernels, regression_loss_kernels,
                           remap_kernels, resample_kernels, rnn_kernels, scan_kernels,
                           select_kernels, sort_kernels, tri_kernels, vector_norm_kernels)
from tensorlib_cpu.kernels import (blas, fused, indexing, pointwise, quantized, random, reduction,
                                   sparse)


def register(table):
    # after pointwise, whose numpy kernels they replace: arith_kernels' pow/fmod/remainder,
    # activation_kernels' exp and tanh (last)
    for module in (pointwise, arith_kernels, clamp_kernels, reduction, blas, indexing, random,
                   fused, attention_kernels, conv_kernels, grid_kernels, onednn_conv,
                   loss_kernels, regression_loss_kernels, norm_kernels, optim_kernels,
                   pool_kernels, resample_kernels, rnn_kernels, select_kernels, tri_kernels,
                   piecewise_kernels, exp_activation_kernels, copy_kernels, scan_kernels,
                   sort_kernels, sparse, quantized, median_kernels, remap_kernels,
                   vector_norm_kernels, activation_kernels):
        table.update(module.KERNELS)
