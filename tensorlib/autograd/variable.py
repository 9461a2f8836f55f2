"""torch.autograd.Variable: the name tensors had before Variable and Tensor merged. Calling it
returns a plain Tensor sharing the data's memory, detached, requiring grad when asked;
every Tensor is an instance of it."""
import warnings

from tensorlib._C.tensor_impl import TensorImpl


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, TensorImpl)

    def __call__(cls, data=None, requires_grad=False, volatile=False):
        import tensorlib
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            data = tensorlib.empty(0)
        if not isinstance(data, TensorImpl):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out


class Variable(metaclass=_VariableMeta):
    """Variable(data, requires_grad=False): `data` detached, as a Tensor (see the module)."""

    __module__ = "tensorlib.autograd.variable"
