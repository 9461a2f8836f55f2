r"""The deprecated spelling of tensorlib.func.functional_call (PyTorch 2.0 moved it)."""
import warnings

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    r"""module(*args, **kwargs) with the named parameters/buffers replaced for this call;
    deprecated (FutureWarning): use tensorlib.func.functional_call."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    from tensorlib.func import functional_call as call
    return call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                strict=strict)


def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False,
                          stack_weights=False):
    r"""A context in which module's named parameters/buffers are the dict's tensors (PyTorch's
    private helper under functional_call, which libraries such as zuko use directly)."""
    from tensorlib.func._functional_call import reparametrize_module
    return reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                                strict=strict, stack_weights=stack_weights)
