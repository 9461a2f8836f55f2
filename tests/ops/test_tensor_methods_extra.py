"""The Tensor methods and interop functions #29 added, against torch: apply_/map_/map2_,
fill_diagonal_, new_empty_strided, resize(_as), is_set_to, dim_order, the is_<device>
queries, hardshrink/prelu methods; frombuffer and DLPack."""
import warnings

import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")


def test_python_callbacks_match_torch():
    ours, want = tensorlib.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    assert ours.apply_(lambda v: v * v + 1) is ours
    want.apply_(lambda v: v * v + 1)
    assert ours.tolist() == want.tolist()
    other = tensorlib.tensor([1.0, 2.0, 3.0])
    ours.map_(other, lambda a, b: a - b)
    want.map_(torch.tensor([1.0, 2.0, 3.0]), lambda a, b: a - b)
    assert ours.tolist() == want.tolist()
    ours.map2_(other, tensorlib.full((2, 3), 2.0), lambda a, b, c: a * c + b)
    want.map2_(torch.tensor([1.0, 2.0, 3.0]), torch.full((2, 3), 2.0), lambda a, b, c: a * c + b)
    assert ours.tolist() == want.tolist()


def test_callbacks_refuse_other_devices():
    if "opencl" not in [b.name for b in tensorlib.backends.list()]:
        pytest.skip("no opencl backend")
    with pytest.raises(TypeError, match="only implemented on CPU"):
        tensorlib.ones(2, device="opencl").apply_(lambda v: v)


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (7, 2), (4, 4, 4)])
@pytest.mark.parametrize("wrap", [False, True])
def test_fill_diagonal_(device, shape, wrap):
    ours = tensorlib.zeros(shape, device=device).fill_diagonal_(2.5, wrap=wrap)
    want = torch.zeros(shape).fill_diagonal_(2.5, wrap=wrap)
    assert ours.cpu().tolist() == want.tolist()
    t_ours = tensorlib.zeros(shape[::-1], device=device).mT if len(shape) == 2 else None
    if t_ours is not None:                         # a non-contiguous self
        t_ours.fill_diagonal_(1.0, wrap=wrap)
        assert t_ours.cpu().tolist() == torch.zeros(shape).fill_diagonal_(1.0, wrap=wrap).tolist()


def test_fill_diagonal_errors():
    for m in (tensorlib, torch):
        with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
            m.zeros(3).fill_diagonal_(1)
        with pytest.raises(RuntimeError, match="equal length"):
            m.zeros(2, 3, 3).fill_diagonal_(1)


def test_layout_queries(device):
    x = tensorlib.empty(2, 3, 4, device=device).permute(2, 0, 1)
    assert x.dim_order() == torch.empty(2, 3, 4).permute(2, 0, 1).dim_order()
    e = x.new_empty_strided((2, 3), (1, 2))
    assert e.stride() == (1, 2) and e.dtype is x.dtype and e.device == x.device
    assert x.is_set_to(x) and not x.is_set_to(x.clone()) and not x.is_set_to(x.contiguous())
    if device == "cpu":                            # data_ptr is host-only in tensorlib
        assert x.const_data_ptr() == x.data_ptr()
    for name in ("is_xpu", "is_mps", "is_ipu", "is_xla", "is_mtia", "is_maia", "is_vulkan",
                 "is_mkldnn", "is_nested"):
        assert getattr(x, name) is False is getattr(torch.ones(1), name)


def test_volatile_and_name():
    x = tensorlib.ones(1)
    assert x.name is None is torch.ones(1).name
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert x.volatile is False


def test_resize_family():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tensorlib.ones(2, 3).resize(3, 2).shape == torch.ones(2, 3).resize(3, 2).shape
        assert tensorlib.ones(2, 3).resize_as(tensorlib.ones(6)).shape == (6,)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        tensorlib.ones(2).resize(2)
    y = tensorlib.ones(2, 3)
    assert y.resize_as_(tensorlib.empty(3, 1)) is y and y.shape == (3, 1)


def test_activation_methods(device):
    x = tensorlib.tensor([-1.0, 0.2, 2.0], device=device)
    assert x.hardshrink(0.3).cpu().tolist() == \
        torch.tensor([-1.0, 0.2, 2.0]).hardshrink(0.3).tolist()
    w = tensorlib.tensor([0.25], device=device)
    assert x.prelu(w).cpu().tolist() == \
        torch.tensor([-1.0, 0.2, 2.0]).prelu(torch.tensor([0.25])).tolist()


def test_stft_method_matches_function():
    x = tensorlib.arange(64.0).sin()
    window = tensorlib.hann_window(16)
    a = x.stft(16, window=window, return_complex=True)
    b = tensorlib.stft(x, 16, window=window, return_complex=True)
    assert tensorlib.equal(a, b)
    back = a.istft(16, window=window, length=64)
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-4)


def test_frombuffer_shares_and_checks():
    raw = bytearray(b"abcdefgh")
    ours = tensorlib.frombuffer(raw, dtype=tensorlib.int16, count=2, offset=2)
    want = torch.frombuffer(bytearray(b"abcdefgh"), dtype=torch.int16, count=2, offset=2)
    assert ours.tolist() == want.tolist()
    ours[0] = 0
    assert raw[2:4] == b"\0\0"                     # the buffer's own memory
    with pytest.warns(UserWarning, match="not writable"):
        assert tensorlib.frombuffer(b"abcd", dtype=tensorlib.uint8).tolist() == [97, 98, 99, 100]
    for m in (tensorlib, torch):
        with pytest.raises(ValueError, match="multiple of element size"):
            m.frombuffer(bytearray(b"abc"), dtype=m.int32)


def test_dlpack_round_trips():
    x = tensorlib.arange(4.0)
    y = tensorlib.from_dlpack(tensorlib.to_dlpack(x))
    y[0] = 7
    assert x.tolist() == [7.0, 1.0, 2.0, 3.0]
    a = np.arange(3)
    z = tensorlib.from_dlpack(a)
    z[1] = 9
    assert a.tolist() == [0, 9, 2]
    assert torch.from_dlpack(tensorlib.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
    assert np.from_dlpack(tensorlib.arange(2)).tolist() == [0, 1]
    with pytest.raises(RuntimeError, match="require gradient"):
        tensorlib.to_dlpack(tensorlib.ones(2, requires_grad=True))
