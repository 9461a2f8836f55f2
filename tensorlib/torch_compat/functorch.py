"""`functorch` under tensorlib.torch_compat: the package PyTorch's wheel still ships beside
`torch` for programs written before torch.func. Its transforms are torch.func's; the module
API (make_functional, ...) is tensorlib.func._make_functional."""
from tensorlib.func import (grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp,  # noqa: F401
                            vmap)
from tensorlib.func._make_functional import (FunctionalModule,  # noqa: F401
                                             FunctionalModuleWithBuffers,
                                             combine_state_for_ensemble, make_functional,
                                             make_functional_with_buffers)
from tensorlib.torch_compat import TORCH_VERSION

__version__ = TORCH_VERSION
__path__ = []   # a package to the import system: `functorch.X` reaches the finder, which names it

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "make_functional", "make_functional_with_buffers", "combine_state_for_ensemble"]
