"""tensorlib.func: PyTorch's composable function transforms (torch.func): grad,
grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call (and
stack_module_state, its ensembles' inputs). The derivative transforms run on the tape
(autograd.grad); vmap runs batch rules per op (see _vmap.py and _batching/)."""
from tensorlib.func._eager_transforms import (grad, grad_and_value, hessian, jacfwd, jacrev,
                                              jvp, vjp)
from tensorlib.func._functional_call import functional_call
from tensorlib.func._stack_module_state import stack_module_state
from tensorlib.func._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state"]
