"""Legacy constructors (Tensor(...), FloatTensor(...), x.new(...)) and what tensor(),
as_tensor() and asarray() read as data, against torch."""
import array
import collections

import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


class _Seq:
    """A user sequence: __len__ and __getitem__ only."""

    def __len__(self):
        return 3

    def __getitem__(self, i):
        if i >= 3:
            raise IndexError(i)
        return i * 1.5


class _ArrayOnly:
    def __array__(self, dtype=None, copy=None):
        return np.array([1.0, 2.0])


# arguments given to both libraries; sizes give uninitialised memory, so shape and dtype
# are compared, the values only when the arguments are data
_LEGACY_ARGS = [
    ((), {}), ((2, 3), {}), (("size", [2, 3]), {}), (([1, 2],), {}), (((1, 2),), {}),
    (([[1, 2], [3, 4]],), {}), (("np", np.ones(3, np.float64)),), (("np", np.arange(4)),),
    (("np", np.array(3.0)),), (("deque", [1, 2]),), (("range", 3),), (([],), {}),
    ((4,), {"device": "cpu"}), (([1.5, 2.5],), {"device": "cpu"}), (("seq",),),
]
_TYPED = ["Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor",
          "ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


def _build(lib, args):
    if args and args[0] == "size":
        return (lib.Size(args[1]),)
    if args and args[0] == "np":
        return (args[1],)
    if args and args[0] == "deque":
        return (collections.deque(args[1]),)
    if args and args[0] == "range":
        return (range(args[1]),)
    if args and args[0] == "seq":
        return (_Seq(),)
    return args


def _is_data(args):
    return bool(args) and not all(isinstance(a, int) for a in args) and args[0] != "size"


@pytest.mark.parametrize("name", _TYPED)
@pytest.mark.parametrize("case", _LEGACY_ARGS, ids=str)
def test_legacy_constructor_matches_torch(name, case):
    args, kwargs = case if len(case) == 2 else (case[0], {})
    ours = getattr(tl, name)(*_build(tl, args), **kwargs)
    theirs = getattr(torch, name)(*_build(torch, args), **kwargs)
    assert isinstance(ours, tl.Tensor)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    if _is_data(args):
        assert ours.tolist() == theirs.tolist()


def test_tensor_follows_the_default_dtype():
    previous = tl.get_default_dtype()
    tl.set_default_dtype(tl.float64)
    try:
        assert tl.Tensor([1, 2]).dtype is tl.float64 and tl.Tensor().dtype is tl.float64
        assert tl.FloatTensor([1, 2]).dtype is tl.float32
    finally:
        tl.set_default_dtype(previous)


@pytest.mark.parametrize("args", [(2, "a"), ("a",), (2.5,), (np.float64(3.0),), (b"ab",),
                                  (_ArrayOnly(),)], ids=str)
@pytest.mark.parametrize("name", ["Tensor", "LongTensor"])
def test_legacy_constructor_errors_match_torch(name, args):
    with pytest.raises(Exception) as expected:
        getattr(torch, name)(*args)
    with pytest.raises(expected.type):
        getattr(tl, name)(*args)


def test_legacy_constructor_other_errors():
    with pytest.raises(RuntimeError, match="negative dimension"):
        tl.Tensor(-1)
    with pytest.raises(TypeError):
        tl.Tensor([1, 2], dtype=tl.float64)          # torch refuses dtype= too
    with pytest.raises(TypeError):
        tl.LongTensor(tl.ones(2))                     # a tensor of another dtype


def test_tensor_of_a_tensor_shares_memory_and_history():
    x = tl.ones(3, requires_grad=True)
    y = tl.Tensor(x)
    assert y is not x and y.data_ptr() == x.data_ptr() and y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    d = tl.ones(2, dtype=tl.float64)
    assert tl.Tensor(d).dtype is tl.float64          # Tensor keeps it, as torch does
    assert tl.DoubleTensor(d).data_ptr() == d.data_ptr()


def test_typed_classes_check_instances_and_convert():
    assert isinstance(tl.ones(2), tl.FloatTensor) and not isinstance(tl.ones(2), tl.LongTensor)
    assert tl.ones(2).type(tl.LongTensor).dtype is tl.int64
    assert tl.LongTensor.dtype is tl.int64


def test_type_of_tensor_itself_is_the_default_dtype():
    """mask.type(torch.Tensor) (nflows' LeakyReLU) converts to the default dtype; other
    classes are refused by name, as PyTorch does."""
    for lib in (tl, torch):
        mask = lib.tensor([-1.0, 2.0]) < 0
        assert str(mask.type(lib.Tensor).dtype).endswith("float32")
        assert mask.type(lib.Tensor).tolist() == [1.0, 0.0]
        previous = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            assert str(mask.type(lib.Tensor).dtype).endswith("float64")
            assert str(mask.type("torch.Tensor").dtype).endswith("float64")
        finally:
            lib.set_default_dtype(previous)
        with pytest.raises(ValueError, match="invalid type: 'Parameter'"):
            mask.type(lib.nn.Parameter)
        for python_type in (int, float, bool):     # Python types stand for dtypes in .to only
            with pytest.raises(ValueError, match=f"invalid type: '{python_type.__name__}'"):
                mask.type(python_type)
        assert str(mask.to(int).dtype).endswith("int64")


CUDA_TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
              "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


@pytest.mark.parametrize("name", CUDA_TYPES)
def test_cuda_typed_classes_exist_and_check_the_device(name):
    """torch.cuda.FloatTensor and the like (torchtestcase lists them all): the dtype of the
    CPU class, is_cuda, and isinstance true only for a tensor on a CUDA device."""
    ours, theirs = getattr(tl.cuda, name), getattr(torch.cuda, name)
    assert ours.dtype is getattr(tl, name).dtype
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.is_cuda and theirs.is_cuda and not getattr(tl, name).is_cuda
    assert repr(ours) == f"<class 'tensorlib.cuda.{name}'>"
    cpu = tl.zeros(2, dtype=ours.dtype)
    assert not isinstance(cpu, ours) and isinstance(cpu, getattr(tl, name))
    assert not isinstance(torch.zeros(2, dtype=theirs.dtype), theirs)


def test_cuda_typed_constructor_needs_a_gpu_and_the_cuda_device():
    with pytest.raises(RuntimeError, match="expects device type: cuda but device type: cpu"):
        tl.cuda.FloatTensor(2, device="cpu")
    if not tl.cuda.is_available():
        with pytest.raises(RuntimeError):
            tl.cuda.FloatTensor(2)
        with pytest.raises(RuntimeError):
            tl.ones(2).type("torch.cuda.FloatTensor")
        return
    t = tl.cuda.LongTensor([1, 2])
    assert t.device.type == "cuda" and t.dtype is tl.int64 and isinstance(t, tl.cuda.LongTensor)
    assert t.type() == "tensorlib.cuda.LongTensor"
    assert t.type("torch.FloatTensor").device.type == "cpu"
    assert tl.ones(2).type(tl.cuda.DoubleTensor).device.type == "cuda"


def test_subclass_without_new_gets_the_legacy_constructor():
    class Mine(tl.Tensor):
        pass
    t = Mine([1, 2])
    assert type(t) is Mine and t.tolist() == [1.0, 2.0]
    assert isinstance(tl.nn.Parameter(tl.ones(2)), tl.nn.Parameter)


def test_legacy_constructors_on_device(device):
    t = tl.Tensor(np.arange(3.0)).to(device)
    assert t.device.type == tl.device(device).type and t.tolist() == [0.0, 1.0, 2.0]
    x = tl.ones(2, dtype=tl.float64, device=device)
    for made in (x.new([1, 2]), x.new(np.ones(2, np.float32)), x.new(2, 3), x.new()):
        assert made.dtype is tl.float64 and made.device == x.device
    assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new(2, 3).shape == (2, 3)
    assert tl.Tensor([1, 2], device=device).device == x.device
    with pytest.raises(TypeError):
        x.new(tl.ones(2, device=device))


def test_new_matches_torch():
    for dtype in ("float32", "float64", "int64"):
        ours = tl.ones(2, dtype=getattr(tl, dtype))
        theirs = torch.ones(2, dtype=getattr(torch, dtype))
        for args in ([1.5, 2], (3,), ()):
            a, b = ours.new(*([args] if isinstance(args, list) else args)), \
                theirs.new(*([args] if isinstance(args, list) else args))
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
            assert tuple(a.shape) == tuple(b.shape)


# ---- what tensor(), as_tensor() and asarray() read as data ---------------------------------
_DATA = {
    "deque": lambda: collections.deque([1, 2, 3]),
    "nested deque": lambda: [collections.deque([1, 2]), (3, 4)],
    "range": lambda: range(4),
    "user sequence": _Seq,
    "nested user sequence": lambda: [_Seq(), _Seq()],
    "array.array": lambda: array.array("d", [1.0, 2.0]),
    "memoryview": lambda: memoryview(b"ab"),
    "numpy float32 scalar": lambda: np.float32(2.5),
    "numpy bool scalar": lambda: np.bool_(True),
    "0-d array": lambda: np.array(3, dtype=np.int16),
    "deque of numpy scalars": lambda: collections.deque([np.float64(1), 2]),
    "list with a 0-d tensor": lambda: ["T", 2],
}


def _materialize(lib, make):
    data = make()
    if isinstance(data, list) and data and data[0] == "T":
        return [lib.tensor(1.5)] + data[1:]
    return data


@pytest.mark.parametrize("fn", ["tensor", "as_tensor", "asarray"])
@pytest.mark.parametrize("kind", list(_DATA))
def test_data_reading_matches_torch(fn, kind):
    make = _DATA[kind]
    try:
        theirs = getattr(torch, fn)(_materialize(torch, make))
    except Exception as e:                          # noqa: BLE001 - the type is compared
        with pytest.raises(type(e)):
            getattr(tl, fn)(_materialize(tl, make))
        return
    ours = getattr(tl, fn)(_materialize(tl, make))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("fn", ["tensor", "as_tensor", "asarray"])
@pytest.mark.parametrize("bad", [lambda: "ab", lambda: {1: 2}, lambda: {1, 2}, _ArrayOnly,
                                 lambda: [[1, 2], [3]]], ids=["str", "dict", "set",
                                                              "__array__ only", "ragged"])
def test_data_errors_match_torch(fn, bad):
    with pytest.raises(Exception) as expected:
        getattr(torch, fn)(bad())
    with pytest.raises(expected.type):
        getattr(tl, fn)(bad())


def test_sequences_on_device(device):
    t = tl.tensor(collections.deque([1.0, 2.0]), device=device)
    assert t.device.type == tl.device(device).type and t.tolist() == [1.0, 2.0]
    assert tl.as_tensor(range(3), device=device).tolist() == [0, 1, 2]
    assert tl.asarray(collections.deque([1, 2]), device=device).dtype is tl.int64


def test_asarray_shares_and_copies():
    a = np.arange(3.0)
    t = tl.asarray(a)
    a[0] = 7
    assert t[0].item() == 7
    assert tl.asarray(a, copy=True).data_ptr() != t.data_ptr()
    x = tl.ones(2)
    assert tl.asarray(x) is x and tl.asarray(x, copy=True) is not x
    assert tl.asarray(x, dtype=tl.float64).dtype is tl.float64
    with pytest.raises(ValueError):
        tl.asarray(x, dtype=tl.float64, copy=False)
    with pytest.raises(ValueError):
        tl.asarray([1, 2], copy=False)
    assert tl.asarray([1.0], requires_grad=True).requires_grad
