"""torch.autograd.Variable: since PyTorch 0.4 every tensor is one; old programs still wrap
tensors in it and test `isinstance(x, Variable)`."""
from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, TensorImpl)


class Variable(metaclass=_VariableMeta):
    """`Variable(t)` is a detached alias of t, requiring grad when asked
    (`Variable(t, requires_grad=True)`), as PyTorch's."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, TensorImpl):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
