"""The backward engine (in Cython, tensorlib/_C/autograd.pyx): count each node's
dependencies, run nodes when all of their gradients have arrived (later-created nodes first
among the ready ones), sum gradients that meet at the same input, accumulate into leaves.

autograd.grad (and backward(inputs=...)) run only the part of the graph that leads to the
requested tensors, as PyTorch does: other nodes neither execute nor fire their hooks."""
from tensorlib._C.autograd import run_backward  # noqa: F401
