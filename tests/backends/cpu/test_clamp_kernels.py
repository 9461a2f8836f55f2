"""clamp_kernels (clamp by numbers, sign and nan_to_num of float tensors in one pass) give
PyTorch's results to the sign of zero, on one thread and on several; the cases they decline
(tensor or NaN bounds, integer, float16 and strided tensors, graphs through sign) still
agree through the composed path."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib._C.factory import empty
from tensorlib_cpu import clamp_kernels as ck

torch = pytest.importorskip("torch")

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, np.inf, -np.inf, np.nan, 1e-40, 3e38, -3e38]


def _values(dtype, n, seed=0):
    x = np.random.default_rng(seed).standard_normal(n) * 2
    x[:len(SPECIAL)] = SPECIAL
    return x.astype(dtype)


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return bool(np.all(((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [29, 300_000])
@pytest.mark.parametrize("bounds", [(0.0, 1.0), (0.0, None), (None, -0.0), (-1.0, 0.0),
                                    (2.0, 1.0), (0, 1), (-np.inf, np.inf)])
def test_clamp_by_numbers_equals_torch(dtype, n, bounds):
    x = _values(dtype, n)
    ours = tl.from_numpy(x).clamp(*bounds).numpy()
    assert _same_bits(ours, torch.from_numpy(x).clamp(*bounds).numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [29, 300_000])
def test_sign_and_nan_to_num_equal_torch(dtype, n):
    x = _values(dtype, n)
    assert _same_bits(tl.sign(tl.from_numpy(x)).numpy(), torch.sign(torch.from_numpy(x)).numpy())
    for args in ((), (1.0, 2.0, -3.0), (0.5, None, -7.0)):
        ours = tl.nan_to_num(tl.from_numpy(x), *args).numpy()
        assert _same_bits(ours, torch.nan_to_num(torch.from_numpy(x), *args).numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("bound", [1e5, 1e39, 1e300])
def test_a_bound_past_the_dtype_raises_as_in_torch(dtype, bound):
    def run(m):
        try:
            m.ones(3, dtype=getattr(m, dtype)).clamp(max=bound)
        except RuntimeError as error:
            return str(error)
        return None
    assert run(tl) == run(torch)


def test_declined_cases_agree_with_torch():
    x = np.clip(_values(np.float32, 60), -1e4, 1e4).reshape(6, 10)
    t, tt = tl.from_numpy(x), torch.from_numpy(x)
    cases = [
        (lambda m, a: a.t().clamp(-0.5, 0.5)),                          # strided
        (lambda m, a: a.clamp(m.tensor(-0.5), m.tensor(0.5))),          # tensor bounds
        (lambda m, a: a.clamp(float("nan"), 1.0)),                      # NaN bound
        (lambda m, a: a.half().clamp(-0.5, 0.5).float()),               # float16
        (lambda m, a: m.nan_to_num(a, 0.0, 9.0, -9.0).int().clamp(-3, 3)),       # integers
        (lambda m, a: m.nan_to_num(a, 0.0, 9.0, -9.0).int().clamp(-2.5, 2.5)),   # to float
        (lambda m, a: m.sign(a.t())),
        (lambda m, a: m.nan_to_num(a.t(), 1.0)),
        (lambda m, a: m.sign(m.nan_to_num(a, 0.0, 9.0, -9.0).int())),
    ]
    for case in cases:
        ours, theirs = case(tl, t), case(torch, tt)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert _same_bits(ours.numpy(), theirs.numpy())


def test_clamp_in_place_and_out():
    x = _values(np.float32, 300_000)
    ours = tl.from_numpy(x.copy())
    ours.clamp_(-0.25, 0.75)
    theirs = torch.from_numpy(x.copy()).clamp_(-0.25, 0.75)
    assert _same_bits(ours.numpy(), theirs.numpy())
    out = tl.empty(x.shape)
    tl.clamp(tl.from_numpy(x), min=0.1, out=out)
    assert _same_bits(out.numpy(), torch.from_numpy(x).clamp(min=0.1).numpy())


def test_gradients_through_the_kernels():
    x = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, np.nan, np.inf])
    ours, theirs = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    for m, a in ((tl, ours), (torch, theirs)):
        (a.clamp(-1.0, 1.0) * 3 + m.sign(a) + m.nan_to_num(a, 0.0, 1.0, -1.0)).sum().backward()
    assert _same_bits(ours.grad.numpy(), theirs.grad.numpy())
    assert tl.sign(ours).requires_grad and tl.nan_to_num(ours).requires_grad


def test_kernels_decline_what_they_do_not_take():
    x = tl.from_numpy(_values(np.float32, 24).reshape(4, 6))
    out = empty((6, 4), x.dtype, x.device)
    assert not ck.clamp(out, x.t(), 0.0, 1.0)
    assert not ck.float_sign(out, x.t())
    assert not ck.nan_to_num(out, x.t(), 0.0, 1.0, -1.0)
    same = empty((4, 6), x.dtype, x.device)
    assert not ck.clamp(same, x, float("nan"), None)
    assert not ck.clamp(same, x, None, None)
    assert not ck.float_sign(empty((4, 6), tl.float64, x.device), x)
    shifted = tl.from_numpy(_values(np.float32, 13))
    assert not ck.float_sign(shifted[1:], shifted[:-1])     # overlapping, not the same
    assert ck.float_sign(shifted, shifted)                   # in place


@pytest.mark.parametrize("call", [lambda x: x.clamp_(-0.5, 0.5), lambda x: x.clamp_min_(0.1),
                                  lambda x: x.clamp_max_(-0.1), lambda x: x.clip_(max=0.2),
                                  lambda x: x.lerp_(x * 0 + 1, 0.3),
                                  lambda x: x.addcmul_(x * 2, x, value=0.5),
                                  lambda x: x.addcdiv_(x * 2, x.abs() + 1, value=-0.5)])
def test_in_place_forms_write_once_and_match_torch(call):
    a = np.random.default_rng(9).standard_normal((70, 1000)).astype(np.float32)
    for make in (lambda m: m.from_numpy(a.copy()), lambda m: m.from_numpy(a.copy()).t()):
        ours, theirs = make(tl), make(torch)
        version = ours._version
        assert call(ours) is ours
        call(theirs)
        assert ours._version == version + 1
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


def test_in_place_clamp_keeps_the_graph_and_the_integer_path():
    a = np.random.default_rng(10).standard_normal(8)
    results = []
    for m in (tl, torch):
        leaf = m.from_numpy(a.copy()).requires_grad_()
        y = leaf * 2
        y.clamp_(-1.0, 1.0)
        y.sum().backward()
        ints = m.from_numpy((a * 10).astype(np.int64)).clamp_(-3, 3)
        results.append((leaf.grad.numpy(), ints.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(RuntimeError):
        tl.zeros(1).expand(4).clamp_(0.0, 1.0)
