"""tensorlib.testing.assert_close and make_tensor against torch.testing: the same pass/fail
decisions, exception classes and messages (torch's names swapped for tensorlib's)."""
import numpy as np
import pytest

import tensorlib
from tensorlib.testing import assert_close, make_tensor

torch = pytest.importorskip("torch")


def _both(build):
    """(tensorlib inputs, torch inputs) from one builder taking the library module."""
    return build(tensorlib), build(torch)


CASES = [
    lambda m: (m.tensor([1.0, 2, 3]), m.tensor([1.0, 2, 4]), {}),
    lambda m: (m.tensor([1.0, 2, 3]), m.tensor([1.0, 2, 3 + 1e-6]), {}),
    lambda m: (m.tensor([1, 2]), m.tensor([1, 3]), {}),
    lambda m: (m.tensor([True, False]), m.tensor([True, True]), {}),
    lambda m: (m.tensor([1.0, 2.0], dtype=m.float16), m.tensor([1.0, 2.001], dtype=m.float16),
               {}),
    lambda m: (m.tensor([1.0, 2.0], dtype=m.bfloat16), m.tensor([1.0, 2.1], dtype=m.bfloat16),
               {}),
    lambda m: (m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64),
               m.tensor([[1.0, 2.5], [3.0, 4.0]], dtype=m.float64), {}),
    lambda m: (m.tensor(1.0), m.tensor(1.5), {}),
    lambda m: (m.tensor([1.0, 2]), m.tensor([1.1, 2]), {"rtol": 0.2, "atol": 0.0}),
    lambda m: (m.tensor([float("nan")]), m.tensor([float("nan")]), {}),
    lambda m: (m.tensor([float("nan")]), m.tensor([float("nan")]), {"equal_nan": True}),
    lambda m: (m.tensor([float("inf")]), m.tensor([float("inf")]), {}),
    lambda m: (m.ones(2), m.ones(3), {}),
    lambda m: (m.ones(2), m.ones(2, dtype=m.float64), {}),
    lambda m: (m.ones(2), m.ones(2, dtype=m.float64), {"check_dtype": False}),
    lambda m: (m.ones(2, 2), m.ones(2, 2).t(), {"check_stride": True}),
    lambda m: (1.0, 1.5, {}),
    lambda m: (1, 1, {}),
    # NumPy scalars compare as Python numbers (BoTorch checks item() against np.float64)
    lambda m: (1.0, np.float64(1.0), {}),
    lambda m: (np.float32(1.0), 1.0, {}),
    lambda m: (np.float64(1.0), np.float64(1.25), {}),
    lambda m: (1, np.int64(1), {}),
    lambda m: (1.0, 1, {}),
    lambda m: (np.float64(1.0), np.array(1.0), {}),
    lambda m: ([1, 2], [1, 3], {}),
    lambda m: ([1, 2], [1], {}),
    lambda m: ({"a": m.ones(1)}, {"a": m.zeros(1)}, {}),
    lambda m: ((m.ones(1), [m.zeros(2)]), (m.ones(1), [m.ones(2)]), {}),
    lambda m: (m.ones(2), 1.0, {}),
    lambda m: (m.ones(1), m.ones(1), {"rtol": 1.0}),
    lambda m: (m.ones(1), m.zeros(1), {"msg": "custom"}),
]


def _outcome(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return type(exc), str(exc)
    return None, None


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_torch(case):
    (a, b, kw), (ta, tb, tkw) = _both(CASES[case])
    ours = _outcome(lambda: assert_close(a, b, **kw))
    ref = _outcome(lambda: torch.testing.assert_close(ta, tb, **tkw))
    assert ours[0] is ref[0]
    if ref[1] is not None:
        assert ours[1] == ref[1].replace("torch.", "tensorlib."), (ours[1], ref[1])


def test_devices_and_callable_msg(device):
    a = tensorlib.ones(2, device=device)
    assert_close(a, tensorlib.ones(2, device=device))
    if device != "cpu":
        with pytest.raises(AssertionError, match="The values for attribute 'device'"):
            assert_close(a, tensorlib.ones(2))
        assert_close(a, tensorlib.ones(2), check_device=False)
    with pytest.raises(AssertionError, match="^prefix: Tensor-likes are not close"):
        assert_close(a, a * 2, msg=lambda m: "prefix: " + m)
    assert_close(np.ones(2), np.ones(2))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int64", "float16", "bfloat16",
                                   "float32", "float64"])
def test_make_tensor(device, dtype):
    dt = getattr(tensorlib, dtype)
    t = make_tensor(3, 4, dtype=dt, device=device)
    assert t.shape == (3, 4) and t.dtype is dt and t.device.type == device.split(":")[0]
    values = t.cpu().to(tensorlib.float64).numpy()
    low, high = {"bool": (0, 1), "uint8": (0, 9)}.get(dtype, (-9, 9))
    assert values.min() >= low and values.max() <= high
    nc = make_tensor((2, 3), dtype=dt, device=device, noncontiguous=True)
    assert not nc.is_contiguous() and nc.shape == (2, 3)
    if dtype != "bool":
        nz = make_tensor(50, dtype=dt, device=device, low=-1, high=1, exclude_zero=True)
        assert (nz != 0).all().item()
    ranged = make_tensor(20, dtype=dt, device=device, low=0, high=1)
    assert ranged.cpu().to(tensorlib.float64).numpy().min() >= 0


def test_make_tensor_errors():
    with pytest.raises(ValueError, match="`low` must be less than or equal to `high`"):
        make_tensor(2, dtype=tensorlib.float32, device="cpu", low=3, high=1)
    with pytest.raises(ValueError):
        make_tensor(2, dtype=tensorlib.int64, device="cpu", requires_grad=True)
    t = make_tensor(2, dtype=tensorlib.float64, device="cpu", requires_grad=True)
    assert t.requires_grad and t.is_leaf


def test_assert_allclose_deprecated_alias():
    """Its own looser float32 defaults, numbers/lists for either side, nan equal by default,
    no dtype check, torch's FutureWarning and messages."""
    for lib in (tensorlib, torch):
        with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated"):
            lib.testing.assert_allclose(lib.tensor([1.0, 2.0]), [1.00005, 2.0])
    with pytest.warns(FutureWarning):
        tensorlib.testing.assert_allclose(tensorlib.tensor([float("nan")]), [float("nan")])
        tensorlib.testing.assert_allclose(2, 2.0)
        tensorlib.testing.assert_allclose(tensorlib.tensor([1], dtype=tensorlib.int64),
                                          tensorlib.tensor([1.0]))
    messages = []
    for lib in (tensorlib, torch):
        with pytest.warns(FutureWarning), pytest.raises(AssertionError) as failure:
            lib.testing.assert_allclose(lib.tensor([1.0, 2.0]), [1.001, 2.0])
        messages.append(str(failure.value))
        with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="^custom$"):
            lib.testing.assert_allclose(lib.tensor([1.0]), [3.0], msg="custom")
    assert messages[0] == messages[1]
