"""uint16/uint32/uint64, PyTorch 2.3+'s barebones unsigned types: creation, conversion,
comparison, printing, NumPy interop, limits, copies, and promotion that refuses every pair but
themselves and the real floating types; the arithmetic PyTorch lacks for them raises."""
import io

import numpy as np
import pytest

import tensorlib as tl

UNSIGNED = ["uint16", "uint32", "uint64"]
ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128", "uint16", "uint32", "uint64"]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("name", UNSIGNED)
def test_dtype_attributes(name):
    d = getattr(tl, name)
    assert repr(d) == f"tensorlib.{name}"
    assert not d.is_signed and not d.is_floating_point and not d.is_complex
    assert d.itemsize == int(name[4:]) // 8
    assert d.to_numpy() == np.dtype(name)
    info = tl.iinfo(d)
    assert (info.min, info.max, info.bits) == (0, int(np.iinfo(name).max), d.itemsize * 8)


@pytest.mark.parametrize("a", ALL)
@pytest.mark.parametrize("b", UNSIGNED)
def test_promote_types_as_torch(torch, a, b):
    def answer(lib, x, y):
        try:
            return str(lib.promote_types(getattr(lib, x), getattr(lib, y))).split(".")[-1]
        except RuntimeError as e:
            return "error: " + str(e).replace("torch", "lib")
    assert answer(tl, a, b) == answer(torch, a, b)
    assert answer(tl, b, a) == answer(torch, b, a)


def test_result_type_tiers(torch):
    for lib in (tl, torch):
        x = lib.tensor([1, 2], dtype=lib.uint32)
        assert lib.result_type(x, 1) is lib.uint32
        assert lib.result_type(x, 1.5) is lib.float32
        assert lib.result_type(x, lib.tensor(1)) is lib.uint32   # a 0-dim tensor ranks below
        assert lib.result_type(lib.tensor(1, dtype=lib.uint16), lib.tensor([1])) is lib.int64
        with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64"):
            lib.result_type(x, lib.tensor([1, 2]))


@pytest.mark.parametrize("name", UNSIGNED)
def test_creation(device, name):
    d = getattr(tl, name)
    big = int(np.iinfo(name).max)
    assert tl.tensor([0, big], dtype=d, device=device).tolist() == [0, big]
    assert tl.zeros(3, dtype=d, device=device).tolist() == [0, 0, 0]
    assert tl.ones(2, dtype=d, device=device).tolist() == [1, 1]
    assert tl.full((2,), 7, dtype=d, device=device).tolist() == [7, 7]
    assert tl.empty(4, dtype=d, device=device).dtype is d
    r = tl.randint(0, 9, (50,), dtype=d, device=device)
    assert r.dtype is d
    assert all(0 <= v < 9 for v in r.tolist())
    assert tl.zeros(2, dtype=d, device=device).element_size() == d.itemsize


def test_arange_refuses_like_torch(torch):
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match="not implemented for 'UInt32'"):
            lib.arange(5, dtype=lib.uint32)


@pytest.mark.parametrize("name", UNSIGNED)
def test_conversions_both_ways(device, torch, name):
    values = [-1, 0, 3, 70000, 2 ** 40]
    got = tl.tensor(values, device=device).to(getattr(tl, name))
    want = torch.tensor(values).to(getattr(torch, name))
    assert got.dtype is getattr(tl, name) and got.tolist() == want.tolist()
    assert got.float().tolist() == want.float().tolist()
    assert got.to(tl.int64).tolist() == want.to(torch.int64).tolist()
    assert got.type(tl.int32).tolist() == want.type(torch.int32).tolist()
    assert got.type() == want.type().replace("torch.", "tensorlib.")


@pytest.mark.parametrize("name", UNSIGNED)
def test_comparison_and_bitwise(device, torch, name):
    a, b = [1, 5, 9], [1, 4, 9]
    ta = tl.tensor(a, dtype=getattr(tl, name), device=device)
    tb = tl.tensor(b, dtype=getattr(tl, name), device=device)
    pa, pb = (torch.tensor(v, dtype=getattr(torch, name)) for v in (a, b))
    assert (ta == tb).tolist() == (pa == pb).tolist()
    assert (ta != tb).tolist() == (pa != pb).tolist()
    assert (ta == 5).tolist() == (pa == 5).tolist()
    assert (ta * tb).tolist() == (pa * pb).tolist()
    assert (ta & tb).tolist() == (pa & pb).tolist()
    assert (ta ^ tb).tolist() == (pa ^ pb).tolist()
    assert tl.equal(ta, ta.clone())


@pytest.mark.parametrize("op", ["add", "sub", "lt", "neg", "abs", "bitwise_not", "max", "amin",
                                "argmax"])
def test_missing_kernels_raise_like_torch(torch, op):
    def call(lib):
        x = lib.tensor([1, 2], dtype=lib.uint32)
        args = (x, x) if op in ("add", "sub", "lt") else (x,)
        return getattr(lib, op)(*args)
    with pytest.raises(NotImplementedError, match="not implemented for 'UInt32'"):
        call(torch)
    with pytest.raises(NotImplementedError, match="not implemented for 'UInt32'"):
        call(tl)


INDEX_AND_SORT_OPS = {       # PyTorch's kernel name in the message, and the call
    "scatter_gather_tensor_cpu": lambda lib, x: x.gather(0, lib.tensor([0])),
    "index_select": lambda lib, x: x.index_select(0, lib.tensor([0])),
    "index_fill_cpu": lambda lib, x: x.index_fill(0, lib.tensor([0]), 1),
    "masked_fill": lambda lib, x: x.masked_fill(x == 1, 0),
    "masked_select": lambda lib, x: x.masked_select(x == 1),
    "nonzero_count_cpu": lambda lib, x: x.nonzero(),
    "take_cpu": lambda lib, x: x.take(lib.tensor([0])),
    "topk_cpu": lambda lib, x: x.topk(1),
    "kthvalue_cpu": lambda lib, x: x.kthvalue(1),
    "searchsorted_out_cpu": lambda lib, x: lib.searchsorted(x, x),
    "bincount_cpu": lambda lib, x: x.bincount(),
    "tril": lambda lib, x: x.view(1, 3).tril(),
    "trace": lambda lib, x: x.view(1, 3)[:, :1].trace(),
    "flip_cpu": lambda lib, x: x.flip(0),
}


@pytest.mark.parametrize("kernel", sorted(INDEX_AND_SORT_OPS))
def test_index_and_sort_ops_refuse_like_torch(torch, kernel):
    """x[index] still works (the index primitive), the named ops raise torch's message."""
    call = INDEX_AND_SORT_OPS[kernel]
    message = f'"{kernel}" not implemented for \'UInt32\''
    for lib in (torch, tl):
        x = lib.tensor([3, 1, 2], dtype=lib.uint32)
        with pytest.raises(NotImplementedError, match=message):
            call(lib, x)
        assert x[lib.tensor([2, 0])].tolist() == [2, 3] and x[x == 1].tolist() == [1]


@pytest.mark.parametrize("name", UNSIGNED)
def test_printing(torch, name):
    big = int(np.iinfo(name).max)
    got = repr(tl.tensor([1, big], dtype=getattr(tl, name)))
    want = repr(torch.tensor([1, big], dtype=getattr(torch, name)))
    assert got == want.replace("torch.", "tensorlib.")


@pytest.mark.parametrize("name", UNSIGNED)
def test_numpy_round_trip(name):
    array = np.array([0, 1, np.iinfo(name).max], dtype=name)
    t = tl.from_numpy(array)
    assert t.dtype is getattr(tl, name)
    assert t.numpy().dtype == np.dtype(name) and (t.numpy() == array).all()
    assert tl.tensor(array).dtype is getattr(tl, name)


@pytest.mark.parametrize("name", UNSIGNED)
def test_indexing_copy_cat_stack(device, name):
    d = getattr(tl, name)
    x = tl.tensor([[1, 2, 3], [4, 5, 6]], dtype=d, device=device)
    assert x[1, 1:].tolist() == [5, 6] and x[:, 0].tolist() == [1, 4]
    assert x.t().contiguous().tolist() == [[1, 4], [2, 5], [3, 6]]
    y = tl.zeros(2, 3, dtype=d, device=device)
    y.copy_(x)
    y[0, 0] = 9
    assert y.tolist() == [[9, 2, 3], [4, 5, 6]]
    assert tl.cat([x, x]).dtype is d and tl.cat([x, x]).shape == (4, 3)
    assert tl.stack([x, x]).tolist() == [x.tolist(), x.tolist()]


@pytest.mark.parametrize("name", UNSIGNED)
def test_save_load_round_trip(name):
    d = getattr(tl, name)
    t = tl.tensor([0, 7, int(np.iinfo(name).max)], dtype=d)
    buffer = io.BytesIO()
    tl.save({"t": t}, buffer)
    buffer.seek(0)
    back = tl.load(buffer)["t"]
    assert back.dtype is d and back.tolist() == t.tolist()
