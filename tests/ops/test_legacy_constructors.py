"""The legacy constructors real programs still call (`torch.Tensor(array)`, `FloatTensor(3)`,
`LongTensor(list)`, `Variable(t, requires_grad=True)`) and `torch.tensor` of any sequence or
array-like object, against PyTorch where it is installed."""
import collections

import numpy as np
import pytest

import tensorlib
from tensorlib.autograd import Variable

torch = pytest.importorskip("torch")

LEGACY = ["Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor",
          "ByteTensor", "HalfTensor"]


def same(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)


@pytest.mark.parametrize("name", LEGACY)
@pytest.mark.parametrize("args", [(), (3,), (2, 3), ([1.7, 2.0, 0.0],), ([[1, 0], [0, 1]],)],
                         ids=["empty", "size", "sizes", "floats", "nested"])
def test_sizes_and_data_as_pytorch(name, args):
    ours, theirs = getattr(tensorlib, name)(*args), getattr(torch, name)(*args)
    same(ours, theirs)
    if args and isinstance(args[0], list):
        assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("name", ["Tensor", "FloatTensor", "LongTensor"])
def test_numpy_and_size_arguments(name):
    array = np.arange(6, dtype=np.int64).reshape(2, 3)
    ours, theirs = getattr(tensorlib, name)(array), getattr(torch, name)(array)
    same(ours, theirs)
    assert ours.tolist() == theirs.tolist()
    same(getattr(tensorlib, name)(tensorlib.Size([4, 1])), getattr(torch, name)(torch.Size([4, 1])))


def test_tensor_of_numpy_moves_to_a_device(device):
    t = tensorlib.Tensor(np.arange(3)).to(device)
    assert t.dtype is tensorlib.float32 and t.cpu().tolist() == [0.0, 1.0, 2.0]


def test_a_tensor_of_the_same_dtype_is_aliased_another_is_refused():
    x = tensorlib.ones(2)
    alias = tensorlib.Tensor(x)
    alias[0] = 5
    assert x.tolist() == [5.0, 1.0]
    with pytest.raises(TypeError):
        tensorlib.FloatTensor(tensorlib.ones(2, dtype=tensorlib.int64))


@pytest.mark.parametrize("args", [(2, "a"), (3.5,), ("abc",)])
def test_bad_arguments_raise_type_error_as_pytorch(args):
    with pytest.raises(TypeError):
        torch.Tensor(*args)
    with pytest.raises(TypeError):
        tensorlib.Tensor(*args)


def test_isinstance_and_type_with_legacy_classes():
    assert isinstance(tensorlib.ones(2), tensorlib.FloatTensor)
    assert not isinstance(tensorlib.ones(2, dtype=tensorlib.int64), tensorlib.FloatTensor)
    assert tensorlib.ones(2).type(tensorlib.LongTensor).dtype is tensorlib.int64


def test_variable_is_a_detached_alias():
    t = tensorlib.ones(2)
    v = Variable(t, requires_grad=True)
    assert v.requires_grad and not t.requires_grad and v.data_ptr() == t.data_ptr()
    assert isinstance(t, Variable)
    w = tensorlib.ones(2, requires_grad=True) * 2
    assert Variable(w).grad_fn is None and not Variable(w).requires_grad


class _Sequence:
    def __len__(self):
        return 3

    def __getitem__(self, i):
        if i >= 3:
            raise IndexError(i)
        return i * 0.5


class _ArrayProtocol:
    def __array__(self, dtype=None, copy=None):
        return np.arange(4, dtype=np.int32).reshape(2, 2)


@pytest.mark.parametrize("make", [
    lambda: collections.deque([1, 2, 3]), lambda: range(4), lambda: _Sequence(),
    lambda: [collections.deque([1.0, 2.0]), (3, 4)],
    lambda: np.float32(2.5), lambda: np.array(7)],
    ids=["deque", "range", "sequence", "nested-deque", "numpy-scalar", "0-d"])
@pytest.mark.parametrize("factory", ["tensor", "as_tensor"])
def test_any_sequence_or_array_like(make, factory):
    ours, theirs = getattr(tensorlib, factory)(make()), getattr(torch, factory)(make())
    same(ours, theirs)
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("factory", ["tensor", "as_tensor"])
def test_array_protocol_objects_convert_through_numpy(factory):
    ours = getattr(tensorlib, factory)(_ArrayProtocol())
    assert ours.dtype is tensorlib.int32 and ours.tolist() == [[0, 1], [2, 3]]
