"""igamma/igammac, torch.fill, addmv_, as_strided_, empty_permuted, nonzero_static,
is_inference, get_device, and the older global switches (anomaly, per-device autocast,
has_*), against torch."""
import warnings

import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")


def test_igamma_family(device):
    a = np.array([0.5, 1.0, 2.5, 4.0])
    x = np.array([0.2, 1.0, 3.0, 1.5])
    oa, ox = tensorlib.tensor(a, device=device), tensorlib.tensor(x, device=device)
    ta, tx = torch.tensor(a), torch.tensor(x)
    np.testing.assert_allclose(tensorlib.igamma(oa, ox).cpu().numpy(),
                               torch.igamma(ta, tx).numpy(), rtol=1e-10)
    np.testing.assert_allclose(oa.igammac(ox).cpu().numpy(), ta.igammac(tx).numpy(), rtol=1e-10)
    y = oa.clone()
    y.igamma_(ox)
    np.testing.assert_allclose(y.cpu().numpy(), torch.igamma(ta, tx).numpy(), rtol=1e-10)
    y = oa.clone()
    y.igammac_(ox)
    np.testing.assert_allclose(y.cpu().numpy(), torch.igammac(ta, tx).numpy(), rtol=1e-10)


def test_fill_and_addmv_(device):
    x = tensorlib.ones(2, dtype=tensorlib.int32, device=device)
    out = tensorlib.fill(x, 2.7)
    assert out.tolist() == torch.fill(torch.ones(2, dtype=torch.int32), 2.7).tolist()
    assert x.tolist() == [1, 1] and out.dtype is tensorlib.int32
    assert tensorlib.fill(tensorlib.ones(3, device=device), tensorlib.tensor(4.0)).tolist() == [4.0] * 3
    for m in (tensorlib, torch):
        with pytest.raises(RuntimeError, match="0-dimension value tensor"):
            m.fill(m.ones(2), m.ones(2))
    a = tensorlib.zeros(2, device=device)
    r = tensorlib.addmv_(a, tensorlib.ones(2, 3, device=device), tensorlib.ones(3, device=device),
                         beta=2, alpha=3)
    assert r is a and a.tolist() == [9.0, 9.0]


def test_as_strided_():
    ours, theirs = tensorlib.arange(6.0), torch.arange(6.0)
    assert tensorlib.as_strided_(ours, (2, 2), (1, 2), 1) is ours
    torch.as_strided_(theirs, (2, 2), (1, 2), 1)
    assert ours.tolist() == theirs.tolist() and ours.stride() == theirs.stride()
    assert ours.storage_offset() == 1
    y = tensorlib.arange(4.0)
    y.as_strided_((2,), (2,))
    assert y.tolist() == [0.0, 2.0]
    for m in (tensorlib, torch):
        with pytest.raises(RuntimeError, match="leaf Variable"):
            m.as_strided_(m.ones(2, requires_grad=True), (1,), (1,))


def test_empty_permuted_and_nonzero_static(device):
    e = tensorlib.empty_permuted((2, 3, 4), (0, 2, 1), device=device)
    assert e.shape == (2, 3, 4)
    assert e.stride() == torch.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    e64 = tensorlib.empty_permuted((2, 3), (1, 0), dtype=tensorlib.float64)
    assert e64.dtype is tensorlib.float64
    for m in (tensorlib, torch):
        with pytest.raises(RuntimeError, match="Duplicate dim"):
            m.empty_permuted((2, 3), (0, 0))
    data = [[1, 0], [3, 2]]
    for size, fill in ((4, -1), (1, 9), (0, -1), (3, 5)):
        ours = tensorlib.nonzero_static(tensorlib.tensor(data, device=device), size=size,
                                        fill_value=fill)
        want = torch.nonzero_static(torch.tensor(data), size=size, fill_value=fill)
        assert ours.tolist() == want.tolist() and ours.dtype is tensorlib.int64
    assert tensorlib.tensor([0, 5], device=device).nonzero_static(size=2).tolist() == [[1], [-1]]
    for m in (tensorlib, torch):
        with pytest.raises(RuntimeError, match="non-negative integer"):
            m.nonzero_static(m.ones(2), size=-1)


def test_is_inference_and_get_device(device):
    with tensorlib.inference_mode():
        made = tensorlib.ones(2, device=device)
    assert made.is_inference() and tensorlib.is_inference(made)
    assert not tensorlib.ones(1).is_inference()
    assert tensorlib.get_device(tensorlib.ones(1)) == torch.get_device(torch.ones(1)) == -1


def test_global_switches_match_torch():
    assert tensorlib.is_anomaly_enabled() is torch.is_anomaly_enabled() is False
    assert tensorlib.is_anomaly_check_nan_enabled() is torch.is_anomaly_check_nan_enabled()
    try:
        tensorlib.set_anomaly_enabled(True, False)
        assert tensorlib.is_anomaly_enabled() and not tensorlib.is_anomaly_check_nan_enabled()
        assert tensorlib.autograd.anomaly_mode.is_enabled()
    finally:
        tensorlib.set_anomaly_enabled(False)
    assert tensorlib.is_anomaly_check_nan_enabled() and not tensorlib.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert str(tensorlib.get_autocast_cpu_dtype()).split(".")[-1] == \
            str(torch.get_autocast_cpu_dtype()).split(".")[-1]
        assert str(tensorlib.get_autocast_gpu_dtype()).split(".")[-1] == \
            str(torch.get_autocast_gpu_dtype()).split(".")[-1]
        assert tensorlib.is_autocast_cpu_enabled() is False
        try:
            tensorlib.set_autocast_cpu_enabled(True)
            tensorlib.set_autocast_cpu_dtype(tensorlib.float16)
            assert tensorlib.is_autocast_enabled("cpu")
            assert tensorlib.get_autocast_dtype("cpu") is tensorlib.float16
            tensorlib.set_autocast_gpu_dtype(tensorlib.bfloat16)
            assert tensorlib.get_autocast_dtype("cuda") is tensorlib.bfloat16
        finally:
            tensorlib.set_autocast_cpu_enabled(False)
            tensorlib.set_autocast_cpu_dtype(tensorlib.bfloat16)
            tensorlib.set_autocast_gpu_dtype(tensorlib.float16)
    with pytest.warns(DeprecationWarning, match="get_autocast_dtype"):
        tensorlib.get_autocast_cpu_dtype()
    assert tensorlib.has_lapack is True and tensorlib.has_spectral is True
    assert tensorlib.has_mkl is tensorlib.backends.mkl.is_available()
    assert tensorlib.has_openmp is tensorlib.backends.openmp.is_available()
