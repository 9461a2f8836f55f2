"""PyTorch's type promotion: categories, tiers (dim tensors > 0-dim tensors > Python numbers)."""
import itertools

import numpy as np
import pytest

import tensorlib as tl

DTYPES = [tl.bool, tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64, tl.float16, tl.bfloat16,
          tl.float32, tl.float64]


@pytest.mark.parametrize("a, b, expected", [
    (tl.uint8, tl.int8, tl.int16), (tl.bool, tl.int32, tl.int32), (tl.int64, tl.float16,
                                                                   tl.float16),
    (tl.float16, tl.bfloat16, tl.float32), (tl.int32, tl.int64, tl.int64),
    (tl.float32, tl.float64, tl.float64), (tl.uint8, tl.int64, tl.int64),
])
def test_promote_types_table(a, b, expected):
    assert tl.promote_types(a, b) is expected
    assert tl.promote_types(b, a) is expected


@pytest.mark.parametrize("operands, expected", [
    ((tl.tensor([1, 2], dtype=tl.int32), 2.5), tl.float32),
    ((tl.tensor([1, 2], dtype=tl.uint8), 1000), tl.uint8),
    ((tl.tensor([True]), 1), tl.int64),
    ((tl.tensor([1.0], dtype=tl.float16), 2.0), tl.float16),
    ((tl.tensor([1], dtype=tl.int32), tl.tensor(5)), tl.int32),
    ((tl.tensor([1], dtype=tl.int32), tl.tensor(5.0, dtype=tl.float64)), tl.float64),
    ((tl.tensor(1, dtype=tl.int8), tl.tensor(1, dtype=tl.int64)), tl.int64),
    ((tl.tensor([1.0]), tl.tensor([1.0], dtype=tl.float64)), tl.float64),
])
def test_result_type_tiers(operands, expected):
    assert tl.result_type(*operands) is expected
    assert (operands[0] + operands[1]).dtype is expected


def test_default_dtype_governs_float_literals():
    tl.set_default_dtype(tl.float64)
    try:
        assert tl.tensor([1.5]).dtype is tl.float64
        assert (tl.tensor([1, 2]) * 0.5).dtype is tl.float64
    finally:
        tl.set_default_dtype(tl.float32)
    with pytest.raises(TypeError):
        tl.set_default_dtype(tl.int32)


def test_matches_pytorch_exhaustively():
    torch = pytest.importorskip("torch")
    tmap = {d: getattr(torch, d.name) for d in DTYPES}
    for a, b in itertools.product(DTYPES, repeat=2):
        assert tl.promote_types(a, b).name == str(torch.promote_types(tmap[a], tmap[b]))[6:]
        for sa, sb in ((1, 1), (1, 0), (0, 1)):
            ta = tl.ones((2,) * sa, dtype=a)
            tb = tl.ones((2,) * sb, dtype=b)
            pa = torch.ones((2,) * sa, dtype=tmap[a])
            pb = torch.ones((2,) * sb, dtype=tmap[b])
            assert tl.result_type(ta, tb).name == str(torch.result_type(pa, pb))[6:]
        for scalar in (True, 3, 2.5):
            assert tl.result_type(tl.ones(2, dtype=a), scalar).name == \
                str(torch.result_type(torch.ones(2, dtype=tmap[a]), scalar))[6:]


def test_inplace_cast_rules():
    x = tl.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        x += 1.5
    x += 2
    assert x.tolist() == [3, 4, 5]
    y = tl.tensor([1.0, 2.0])
    y += tl.tensor([1, 1])
    assert y.dtype is tl.float32 and y.tolist() == [2.0, 3.0]


def test_numpy_dtype_round_trip():
    for d in DTYPES:
        arr = np.zeros(3, dtype=d.np)
        assert tl.from_numpy(arr).dtype is d
    for d in (tl.complex64, tl.complex128):
        assert tl.from_numpy(np.zeros(3, dtype=d.np)).dtype is d
    for d in (tl.uint16, tl.uint32, tl.uint64):
        assert tl.from_numpy(np.zeros(3, dtype=d.np)).dtype is d
    with pytest.raises(TypeError, match="can't convert np.ndarray of type float128"):
        tl.from_numpy(np.zeros(2, np.longdouble))
