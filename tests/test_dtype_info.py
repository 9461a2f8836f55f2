"""tensorlib.finfo / iinfo against torch's."""
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64",
                                  "complex128", None])
def test_finfo_matches_torch(name):
    got = tl.finfo(getattr(tl, name)) if name else tl.finfo()
    want = torch.finfo(getattr(torch, name)) if name else torch.finfo()
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(got, attr) == getattr(want, attr), attr
    assert repr(got) == repr(want)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(name):
    got, want = tl.iinfo(getattr(tl, name)), torch.iinfo(getattr(torch, name))
    assert (got.bits, got.max, got.min, got.dtype) == (want.bits, want.max, want.min, want.dtype)
    assert repr(got) == repr(want)


def test_wrong_kinds_raise_type_error():
    for bad in (tl.int32, tl.bool):
        with pytest.raises(TypeError):
            tl.finfo(bad)
    for bad in (tl.float32, tl.bool, tl.complex64):
        with pytest.raises(TypeError):
            tl.iinfo(bad)
