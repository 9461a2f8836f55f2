"""uint16 / uint32 / uint64: PyTorch's limited-support unsigned dtypes. They exist and hold
values; promotion mixes them only with floating types (PyTorch's rule and error),
so code comparing dtypes against them (torchvision's _max_value) works."""
import numpy as np
import pytest

import tensorlib as tl

UNSIGNED = [tl.uint16, tl.uint32, tl.uint64]


@pytest.mark.parametrize("d", UNSIGNED)
def test_promotion_matches_pytorch(d):
    torch = pytest.importorskip("torch")
    for other in [tl.bool, tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64, tl.float16,
                  tl.bfloat16, tl.float32, tl.float64, tl.complex64, tl.complex128] + UNSIGNED:
        t_d, t_o = getattr(torch, d.name), getattr(torch, other.name)
        try:
            want = torch.promote_types(t_d, t_o)
        except RuntimeError as exc:
            with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64"):
                tl.promote_types(d, other)
            assert "not supported" in str(exc)
            continue
        assert tl.promote_types(d, other).name == str(want).rpartition(".")[2]


@pytest.mark.parametrize("d", UNSIGNED)
def test_values_round_trip(d):
    info = tl.iinfo(d)
    assert info.min == 0 and info.max == np.iinfo(d.np).max
    assert not d.is_signed and not d.is_floating_point and d.itemsize == d.np.itemsize
    x = tl.tensor([0, info.max], dtype=d)
    assert x.tolist() == [0, info.max] and x.dtype is d
    assert tl.from_numpy(np.array([5], dtype=d.np)).dtype is d
    assert x.to(tl.float64).dtype is tl.float64 and (x == 0).tolist() == [True, False]
    assert repr(tl.zeros(1, dtype=d)) == f"tensor([0], dtype=tensorlib.{d.name})"


def test_mixing_with_signed_ints_is_refused():
    with pytest.raises(RuntimeError, match="attempted to promote UInt16 and Int"):
        tl.ones(2, dtype=tl.uint16) + tl.ones(2, dtype=tl.int32)
    with pytest.raises(NotImplementedError, match="not implemented for 'UInt16'"):
        tl.ones(2, dtype=tl.uint16) + 1                 # PyTorch has no add kernel for it
    assert (tl.ones(2, dtype=tl.uint32) * 0.5).dtype is tl.float32


@pytest.mark.parametrize("d", UNSIGNED)
def test_casts_and_compares_on_every_device(d, device):
    x = tl.tensor([1, 65535], dtype=d, device=device)
    assert x.to(tl.float32).cpu().tolist() == [1.0, 65535.0]
    assert x.to(tl.int64).cpu().tolist() == [1, 65535]
    assert (x == 1).cpu().tolist() == [True, False]
    assert tl.tensor([3.0, 7.0], device=device).to(d).cpu().tolist() == [3, 7]
