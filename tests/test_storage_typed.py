"""Tensor.storage(): the deprecated torch.TypedStorage over the tensor's untyped storage, with
PyTorch's warning; views of one base share it; UntypedStorage.nbytes() is a method."""
import warnings

import pytest

import tensorlib as tl
from tensorlib import _storage_typed


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _storage(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.storage()


def test_warns_once_with_torchs_text(torch, monkeypatch):
    monkeypatch.setattr(_storage_typed, "_warned", False)
    with pytest.warns(UserWarning) as got:
        tl.ones(2).storage()
    monkeypatch.setattr(torch.storage._warn_typed_storage_removal, "has_warned", False,
                        raising=False)
    with pytest.warns(UserWarning) as want:
        torch.ones(2).storage()
    assert str(got[0].message) == str(want[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tl.ones(2).storage()                # once per process, as PyTorch


def test_typed_storage_reads_like_torch(torch):
    got = _storage(tl.arange(6.0).view(2, 3))
    want = _storage(torch.arange(6.0).view(2, 3))
    assert isinstance(got, tl.TypedStorage)
    assert got.size() == len(got) == want.size() == 6
    assert got.dtype is tl.float32 and got.device == tl.device("cpu")
    assert got.element_size() == want.element_size() and got.nbytes() == want.nbytes()
    assert got.tolist() == want.tolist() and got[4] == want[4] and got[-1] == want[-1]
    assert got.untyped() is got._untyped_storage
    assert got._untyped_storage.nbytes() == 24
    with pytest.raises(IndexError):
        got[6]


def test_views_share_one_storage():
    base = tl.arange(12, dtype=tl.int32).view(3, 4)
    a, b = _storage(base[1]), _storage(base[:, 2])
    assert a.data_ptr() == b.data_ptr() == _storage(base).data_ptr() == base.data_ptr()
    assert a._untyped_storage is base.untyped_storage()
    assert a.size() == 12                   # the whole storage, as PyTorch's
    a[0] = 100
    assert base[0, 0].item() == 100


def test_untyped_storage_methods(torch):
    t = tl.arange(4.0)
    got, want = t.untyped_storage(), torch.arange(4.0).untyped_storage()
    assert got.nbytes() == want.nbytes() == got.size() == len(got) == 16
    assert got.element_size() == 1 and got.untyped() is got
    assert got.tolist() == want.tolist() and got[5] == want[5]
    assert got.data_ptr() == t.data_ptr()


def test_legacy_storage_names(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = tl.LongStorage([1, 2, 3]), torch.LongStorage([1, 2, 3])
        assert type(got) is tl.TypedStorage and got.dtype is tl.int64
        assert got.tolist() == want.tolist() and len(tl.FloatStorage(4)) == 4
        assert isinstance(tl.ones(2).storage(), tl.FloatStorage)
        assert not isinstance(tl.ones(2).storage(), tl.DoubleStorage)
        assert tl.is_storage(got) and tl.is_storage(tl.ones(1).untyped_storage())
