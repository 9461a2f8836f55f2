"""torch.autograd.Variable: a detached Tensor sharing the data, an isinstance check that every
tensor passes, PyTorch's errors."""
import pytest

import tensorlib
from tensorlib.autograd import Variable


def test_variable_returns_a_tensor_sharing_memory(device):
    x = tensorlib.ones(3, device=device)
    v = Variable(x)
    assert type(v) is tensorlib.Tensor and v is not x
    v.add_(1)                                            # writes show in x: shared memory
    assert x.tolist() == [2.0, 2.0, 2.0]
    assert not v.requires_grad and isinstance(x, Variable) and isinstance(v.data, Variable)
    w = Variable(x, requires_grad=True)
    assert w.requires_grad and w.is_leaf and not x.requires_grad
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0] and w.tolist() == [2.0, 2.0, 2.0]


def test_variable_of_a_non_leaf_is_a_new_leaf():
    y = tensorlib.ones(2, requires_grad=True) * 2
    v = Variable(y)
    assert v.grad_fn is None and v.is_leaf and not v.requires_grad


def test_variable_arguments_as_pytorch():
    assert Variable().shape == (0,)
    assert not isinstance([1], Variable)
    with pytest.raises(TypeError, match="has to be a tensor"):
        Variable([1, 2])
    with pytest.warns(UserWarning, match="volatile"):
        Variable(tensorlib.ones(1), volatile=True)
    from tensorlib.autograd.variable import Variable as same
    assert same is Variable
