"""torch.overrides: an object that is not a tensor but defines __torch_function__ receives the
calls of public functions it is given (positional, keyword, inside a list), ahead of the op;
calls without one run and fail as they did."""
import pytest

import tensorlib
from tensorlib import overrides

F = tensorlib.nn.functional


class Logged:
    """A tensor-like that answers every function with what it was called with."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return func, types, args, kwargs or {}


class Declines:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


class LoggedChild(Logged):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return "child", types


@pytest.mark.parametrize("call, func", [
    (lambda v, x: tensorlib.relu(v), tensorlib.relu),
    (lambda v, x: tensorlib.add(x, v), tensorlib.add),
    (lambda v, x: tensorlib.add(x, other=v), tensorlib.add),
    (lambda v, x: tensorlib.cat([x, v]), tensorlib.cat),
    (lambda v, x: tensorlib.where(v, x, x), tensorlib.where),
    (lambda v, x: F.leaky_relu(v, 0.1), F.leaky_relu),
    (lambda v, x: F.conv2d(v, x), F.conv2d),
    (lambda v, x: tensorlib.linalg.norm(v), tensorlib.linalg.norm),
    (lambda v, x: tensorlib.special.expit(v), tensorlib.special.expit),
    (lambda v, x: x.add(v), tensorlib.Tensor.add),
])
def test_public_functions_hand_the_call_to_torch_function(call, func):
    answer = call(Logged(), tensorlib.ones(2))
    assert answer[0] is func
    assert answer[1] == (Logged,)


def test_arguments_are_passed_as_given():
    v, x = Logged(), tensorlib.ones(2)
    func, _, args, kwargs = tensorlib.sum(v, dim=0, keepdim=True)
    assert func is tensorlib.sum and args == (v,) and kwargs == {"dim": 0, "keepdim": True}
    _, _, args, _ = tensorlib.cat([x, v], 0)
    assert args[0][1] is v and args[1] == 0


def test_subclass_first_and_declining_types_skipped():
    assert tensorlib.add(Logged(), LoggedChild()) == ("child", (LoggedChild, Logged))
    assert tensorlib.add(Declines(), Logged())[0] is tensorlib.add
    with pytest.raises(TypeError, match="no implementation found for 'add'.*Declines"):
        tensorlib.add(Declines(), tensorlib.ones(1))


def test_calls_without_an_override_keep_their_own_errors():
    with pytest.raises(RuntimeError, match="size"):
        tensorlib.add(tensorlib.ones(2), tensorlib.ones(3))
    with pytest.raises(TypeError):
        tensorlib.cat([tensorlib.ones(2), "x"])
    assert tensorlib.add(tensorlib.ones(2), 1).tolist() == [2.0, 2.0]   # and still work


def test_tensor_subclasses_are_dispatched():
    class Sub(tensorlib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return "sub", func

    s = Sub([1.0, -2.0])
    assert tensorlib.relu(s) == ("sub", tensorlib.relu)
    assert F.relu(s) == ("sub", F.relu)
    assert overrides.has_torch_function((s,))
    assert not overrides.has_torch_function((tensorlib.ones(1),))
    assert not overrides.has_torch_function((tensorlib.nn.Parameter(tensorlib.ones(1)),))


def test_the_overrides_helpers():
    v, x = Logged(), tensorlib.ones(1)
    assert overrides.has_torch_function((x, v)) and not overrides.has_torch_function((x, 1))
    assert overrides.has_torch_function_unary(v) and not overrides.has_torch_function_unary(x)
    assert overrides.has_torch_function_variadic(x, v)
    assert overrides.is_tensor_like(x) and overrides.is_tensor_like(v)
    assert not overrides.is_tensor_like(1.0)
    assert overrides.handle_torch_function(tensorlib.neg, (v,), v)[0] is tensorlib.neg
    assert overrides.is_tensor_method_or_property(tensorlib.Tensor.add)
    assert not overrides.is_tensor_method_or_property(tensorlib.add)


def test_a_user_function_made_overridable():
    def scale(x, factor=2.0):
        return x * factor

    wrapped = overrides.overridable(scale)
    assert wrapped(tensorlib.ones(1)).tolist() == [2.0] and wrapped.__name__ == "scale"
    assert wrapped(Logged(), factor=3.0)[3] == {"factor": 3.0}
    assert overrides.overridable(tensorlib.Tensor) is tensorlib.Tensor


def test_autograd_reexports_the_protocol_helpers():
    """torch.autograd.handle_torch_function / has_torch_function / is_tensor_like are
    torch.overrides' functions; programs reach them through either module."""
    import tensorlib.autograd as autograd
    assert autograd.handle_torch_function is overrides.handle_torch_function
    assert autograd.has_torch_function is overrides.has_torch_function
    assert autograd.is_tensor_like is overrides.is_tensor_like
    assert autograd.is_tensor_like(tensorlib.zeros(1)) and not autograd.is_tensor_like([1])


@pytest.mark.parametrize("call, dtype", [
    (lambda: tensorlib.zeros(2, dtype=float), tensorlib.float64),
    (lambda: tensorlib.ones(2, dtype=int), tensorlib.int64),
    (lambda: tensorlib.eye(2, dtype=float), tensorlib.float64),
    (lambda: tensorlib.tensor([1, 2], dtype=float), tensorlib.float64),
    (lambda: tensorlib.full((2,), 1, dtype=bool), tensorlib.bool),
    (lambda: tensorlib.empty(2, dtype=complex), tensorlib.complex128),
    (lambda: tensorlib.zeros(2).to(float), tensorlib.float64),
    (lambda: tensorlib.zeros(2).to(dtype=int), tensorlib.int64),
    (lambda: tensorlib.zeros(2).sum(dtype=float), tensorlib.float64),
    (lambda: tensorlib.zeros(3).cumsum(0, dtype=float), tensorlib.float64),
    (lambda: tensorlib.zeros_like(tensorlib.ones(2), dtype=float), tensorlib.float64),
])
def test_python_types_stand_for_dtypes(call, dtype):
    """PyTorch's argument parser takes float/int/bool/complex wherever a dtype goes."""
    assert call().dtype is dtype


def test_a_python_type_where_no_dtype_goes_keeps_the_ops_error():
    with pytest.raises(TypeError):
        tensorlib.zeros(2).add(float)
