"""The autograd graph: nodes (grad_fn) with next_functions, saved tensors checked against the
version counter, leaves' AccumulateGrad nodes. Implemented in Cython (tensorlib/_C/autograd.pyx)
because recording and walking the graph is per-op overhead."""
from tensorlib._C.autograd import (AccumulateGrad, Node, SavedTensor, TensorMeta,  # noqa: F401
                                   accumulator, edge)
