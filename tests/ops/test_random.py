"""Random ops: the counter-based generator's state handling, reproducibility, the documented
philox mapping (what makes results the same on every backend), statistics with loose bounds,
dtypes, errors and autograd."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib_cpu import philox

N = 100_000


def host(t):
    return t.cpu().numpy()


# ---- generator state --------------------------------------------------------------------

def test_manual_seed_reproduces(device):
    tl.manual_seed(123)
    a = host(tl.rand(7, device=device)), host(tl.randn(3, 2, device=device))
    tl.manual_seed(123)
    b = host(tl.rand(7, device=device)), host(tl.randn(3, 2, device=device))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_consecutive_draws_differ(device):
    tl.manual_seed(0)
    assert not np.array_equal(host(tl.rand(10, device=device)), host(tl.rand(10, device=device)))


def test_generator_object_and_independence():
    g1, g2 = tl.Generator().manual_seed(5), tl.Generator().manual_seed(5)
    a = host(tl.rand(4, generator=g1))
    tl.rand(100)                                  # the default generator does not disturb g2
    np.testing.assert_array_equal(a, host(tl.rand(4, generator=g2)))
    assert not np.array_equal(host(tl.rand(4, generator=g1)), a)
    assert g1.manual_seed(9) is g1 and g1.initial_seed() == 9
    assert g1.device == tl.device("cpu")
    assert tl.Generator().initial_seed() == 67280421310721


def test_get_set_state_round_trip():
    g = tl.Generator().manual_seed(2)
    tl.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype is tl.uint8 and state.shape == (16,)
    a = host(tl.randn(5, generator=g))
    g.manual_seed(77)
    g.set_state(state)
    np.testing.assert_array_equal(host(tl.randn(5, generator=g)), a)
    assert g.initial_seed() == 2


def test_module_state_functions():
    tl.manual_seed(11)
    assert tl.initial_seed() == 11
    s = tl.get_rng_state()
    a = host(tl.rand(4))
    tl.set_rng_state(s)
    np.testing.assert_array_equal(host(tl.rand(4)), a)
    assert tl.manual_seed(11) is tl.default_generator
    s1 = tl.seed()
    assert tl.initial_seed() == s1 and 0 <= s1 < 2 ** 64
    tl.manual_seed(-1)                            # negative seeds wrap like PyTorch's
    assert tl.initial_seed() == 2 ** 64 - 1


def test_state_errors():
    g = tl.Generator()
    with pytest.raises(TypeError, match="ByteTensor"):
        g.set_state(tl.zeros(16))
    with pytest.raises(RuntimeError, match="wrong size"):
        g.set_state(tl.zeros(5, dtype=tl.uint8))
    with pytest.raises(RuntimeError, match="expected a long"):
        g.manual_seed(1.5)
    with pytest.raises(ValueError, match="Overflow"):
        g.manual_seed(2 ** 64)


# ---- the documented philox mapping -------------------------------------------------------

@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.float16, tl.bfloat16])
def test_rand_is_the_documented_stream(dtype, device):
    tl.manual_seed(42)
    got = host(tl.rand(5, dtype=dtype, device=device))
    np.testing.assert_array_equal(got, philox.uniform(42, 0, 5, dtype.np))
    k = philox.words_per_number(dtype.np)
    # the next draw starts at the previous one's words rounded up to a multiple of 4
    nxt = host(tl.rand(3, dtype=dtype, device=device))
    np.testing.assert_array_equal(nxt, philox.uniform(42, -(-5 * k // 4) * 4, 3, dtype.np))


def test_offsets_advance_by_whole_blocks():
    g = tl.Generator().manual_seed(1)
    tl.rand(5, generator=g)                    # 5 words -> 8
    tl.randn(3, dtype=tl.float64, generator=g)  # 6 words -> 8
    tl.rand(0, generator=g)                    # nothing
    assert int.from_bytes(bytes(g.get_state()[8:].tolist()), "little") == 16
    np.testing.assert_allclose(host(tl.randn(3, 2, generator=g)),
                               philox.normal(1, 16, 6).reshape(3, 2), rtol=1e-6)


def test_randn_and_in_place_follow_the_stream(device):
    tl.manual_seed(7)
    np.testing.assert_allclose(host(tl.randn(2, 3, device=device)),
                               philox.normal(7, 0, 6).reshape(2, 3), rtol=1e-5, atol=1e-6)
    tl.manual_seed(7)
    x = tl.empty(4, 6, device=device)[:, ::2]  # a non-contiguous output, row-major order
    x.uniform_()
    np.testing.assert_array_equal(host(x), philox.uniform(7, 0, 12).reshape(4, 3))


def test_randint_mapping():
    tl.manual_seed(3)
    u = philox.uniform(3, 0, 6, np.float64)
    np.testing.assert_array_equal(host(tl.randint(-5, 7, (6,))), -5 + np.floor(u * 12))


# ---- statistics (loose bounds, N = 1e5) ---------------------------------------------------

def test_rand_randn_normal_moments(device):
    tl.manual_seed(0)
    u = host(tl.rand(N, device=device)).astype(np.float64)
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    z = host(tl.randn(N, device=device)).astype(np.float64)
    assert abs(z.mean()) < 0.02 and abs(z.var() - 1) < 0.03
    y = host(tl.normal(3.0, 2.0, (N,), device=device)).astype(np.float64)
    assert abs(y.mean() - 3) < 0.05 and abs(y.std() - 2) < 0.05
    w = host(tl.normal(tl.full((N,), -1.0, device=device), 0.5)).astype(np.float64)
    assert abs(w.mean() + 1) < 0.02 and abs(w.std() - 0.5) < 0.02


@pytest.mark.parametrize("dtype", [tl.float16, tl.bfloat16, tl.float64])
def test_uniform_in_other_dtypes_stays_below_one(dtype):
    tl.manual_seed(1)
    u = host(tl.rand(N, dtype=dtype)).astype(np.float64)
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01


def test_randint_range_and_dtypes(device):
    tl.manual_seed(0)
    r = tl.randint(-3, 4, (N,), device=device)
    assert r.dtype is tl.int64
    v = host(r)
    assert set(np.unique(v)) == set(range(-3, 4))
    assert np.abs(np.bincount(v + 3) / N - 1 / 7).max() < 0.01
    for dtype in (tl.int8, tl.uint8, tl.int16, tl.int32, tl.float32, tl.bool):
        t = tl.randint(0, 2, (100,), dtype=dtype, device=device)
        assert t.dtype is dtype and set(np.unique(host(t).astype(int))) <= {0, 1}
    big = host(tl.randint(-2 ** 63, 2 ** 63 - 1, (1000,)))
    assert big.min() < -2 ** 61 and big.max() > 2 ** 61
    near_top = host(tl.randint(2 ** 63 - 10, 2 ** 63 - 1, (1000,)))
    assert near_top.min() >= 2 ** 63 - 10 and near_top.max() <= 2 ** 63 - 2


def test_uniform_and_random_in_place(device):
    tl.manual_seed(0)
    x = tl.empty(N, device=device).uniform_(-2, 3)
    v = host(x)
    assert v.min() >= -2 and v.max() < 3 and abs(v.mean() - 0.5) < 0.05
    r = host(tl.empty(N, device=device).random_(2, 9))
    assert set(np.unique(r)) == set(range(2, 9))
    assert set(np.unique(host(tl.empty(1000, dtype=tl.int64).random_(4)))) == {0, 1, 2, 3}
    b = host(tl.empty(1000, dtype=tl.uint8).random_())
    assert b.max() > 200
    f = host(tl.empty(1000).random_())
    assert f.min() >= 0 and f.max() <= 2 ** 24 and np.all(f == np.floor(f))


def test_exponential_and_normal_in_place(device):
    tl.manual_seed(0)
    e = host(tl.empty(N, device=device).exponential_(2.0)).astype(np.float64)
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.01
    n = host(tl.empty(N, dtype=tl.float64, device=device).normal_(1.0, 3.0))
    assert abs(n.mean() - 1) < 0.05 and abs(n.std() - 3) < 0.05


def test_randperm(device):
    tl.manual_seed(0)
    for n in (0, 1, 10, 1000):
        p = tl.randperm(n, device=device)
        assert p.dtype is tl.int64 and sorted(host(p).tolist()) == list(range(n))
    assert tl.randperm(5, dtype=tl.int32).dtype is tl.int32
    first = np.array([host(tl.randperm(4))[0] for _ in range(2000)])
    assert np.abs(np.bincount(first, minlength=4) / 2000 - 0.25).max() < 0.05


def test_bernoulli(device):
    tl.manual_seed(0)
    p = tl.full((N,), 0.3, device=device)
    b = tl.bernoulli(p)
    assert b.dtype is tl.float32 and set(np.unique(host(b))) == {0.0, 1.0}
    assert abs(host(b).mean() - 0.3) < 0.01
    assert abs(host(p.bernoulli()).mean() - 0.3) < 0.01
    assert abs(host(tl.bernoulli(tl.zeros(N, device=device), 0.8)).mean() - 0.8) < 0.01
    assert abs(host(tl.empty(N, dtype=tl.int64, device=device).bernoulli_(0.6)).mean()
               - 0.6) < 0.01
    probs = tl.tensor([0.0, 1.0, 0.5], device=device).expand(N // 10, 3)
    col = host(tl.empty(N // 10, 3, device=device).bernoulli_(probs)).mean(0)
    assert col[0] == 0 and col[1] == 1 and abs(col[2] - 0.5) < 0.03


def test_multinomial_with_replacement(device):
    tl.manual_seed(0)
    probs = np.array([0.1, 0.0, 0.6, 0.3])
    s = tl.multinomial(tl.tensor(probs * 5, dtype=tl.float32, device=device), N, True)
    assert s.dtype is tl.int64 and s.shape == (N,)
    freq = np.bincount(host(s), minlength=4) / N
    assert np.abs(freq - probs).max() < 0.01 and freq[1] == 0
    two = tl.multinomial(tl.tensor([[1.0, 0.0], [0.0, 1.0]], device=device), 50, True)
    assert two.shape == (2, 50) and host(two)[0].max() == 0 and host(two)[1].min() == 1
    tail = tl.multinomial(tl.tensor([1.0, 0.0, 0.0], device=device), 1000, True)
    assert host(tail).max() == 0                  # trailing zero categories are never drawn


def test_multinomial_without_replacement(device):
    tl.manual_seed(0)
    probs = tl.tensor([[0.5, 0.2, 0.2, 0.1, 0.0]], device=device).expand(N // 10, 5)
    s = host(tl.multinomial(probs, 4))
    assert s.shape == (N // 10, 4)
    assert all(len(set(row)) == 4 for row in s[:2000]) and (s != 4).all()
    first = np.bincount(s[:, 0], minlength=5) / len(s)
    assert np.abs(first - [0.5, 0.2, 0.2, 0.1, 0]).max() < 0.02
    # the second draw follows the distribution renormalised without the first
    second_given_0 = np.bincount(s[s[:, 0] == 0, 1], minlength=5)
    np.testing.assert_allclose(second_given_0 / second_given_0.sum(),
                               [0, 0.4, 0.4, 0.2, 0], atol=0.03)
    assert sorted(host(tl.multinomial(tl.ones(6, device=device), 6)).tolist()) == list(range(6))
    # more samples than non-zero categories: the zero ones come last (PyTorch allows it)
    s = host(tl.multinomial(tl.tensor([0.0, 1.0, 0.0, 2.0], device=device), 4))
    assert set(s[:2]) == {1, 3} and set(s[2:]) == {0, 2}


def test_multinomial_errors():
    with pytest.raises(RuntimeError, match="without replacement"):
        tl.multinomial(tl.ones(3), 4)
    with pytest.raises(RuntimeError, match="element < 0"):
        tl.multinomial(tl.tensor([0.5, -0.1]), 1)
    with pytest.raises(RuntimeError, match="element < 0"):
        tl.multinomial(tl.tensor([0.5, float("nan")]), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        tl.multinomial(tl.zeros(3), 1, True)
    with pytest.raises(RuntimeError, match="1 or 2 dim"):
        tl.multinomial(tl.ones(2, 2, 2), 1)
    with pytest.raises(RuntimeError, match="floating-point"):
        tl.multinomial(tl.ones(3, dtype=tl.int64), 1)
    with pytest.raises(RuntimeError, match="n_sample <= 0"):
        tl.multinomial(tl.ones(3), 0)


# ---- factories: signatures, dtypes, errors ------------------------------------------------

def test_factory_signatures_and_dtypes(device):
    assert tl.rand(2, 3, device=device).shape == (2, 3)
    assert tl.rand((2, 3)).shape == (2, 3) and tl.randn([4]).shape == (4,)
    assert tl.rand(size=(2, 2)).shape == (2, 2) and tl.rand(()).shape == ()
    assert tl.randn(3, dtype=tl.float64).dtype is tl.float64
    assert tl.randint(5, (3,)).shape == (3,) and tl.randint(high=5, size=(2,)).shape == (2,)
    assert tl.randint(1, 5, size=(2,)).dtype is tl.int64
    x = tl.zeros(2, 3, dtype=tl.float64, device=device)
    assert tl.rand_like(x).dtype is tl.float64 and tl.randn_like(x).shape == (2, 3)
    r = tl.randint_like(x, 10)
    assert r.dtype is tl.float64 and host(r).max() < 10
    assert tl.randint_like(tl.zeros(3, dtype=tl.int32), 2, 4).dtype is tl.int32
    assert tl.rand_like(x).device == x.device


def test_factory_errors():
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        tl.rand(2, dtype=tl.int64)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        tl.randn(2, dtype=tl.int64)
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        tl.randint(5, 5, (2,))
    with pytest.raises(RuntimeError, match="out of bounds"):
        tl.randint(0, 300, (2,), dtype=tl.uint8)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        tl.randperm(-1)
    with pytest.raises(RuntimeError, match="too large"):
        tl.randperm(300, dtype=tl.int8)
    with pytest.raises(RuntimeError, match="found std -1$"):
        tl.normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        tl.normal(tl.zeros(2), tl.tensor([1.0, -1.0]))
    with pytest.raises(RuntimeError, match="p_in >= 0"):
        tl.bernoulli(tl.tensor([0.5, 1.5]))
    with pytest.raises(RuntimeError, match=r"p to be in \[0, 1\]"):
        tl.empty(3).bernoulli_(2.0)
    with pytest.raises(RuntimeError, match="from=1 > to=0"):
        tl.empty(3).uniform_(1, 0)
    with pytest.raises(RuntimeError, match="lambda > 0.0"):
        tl.empty(3).exponential_(0)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        tl.empty(3, dtype=tl.int64).uniform_()
    with pytest.raises(TypeError):
        tl.rand(2, generator="not a generator")


def test_generator_device_must_match(device):
    with pytest.raises(RuntimeError, match="device type for generator"):
        tl.rand(2, generator=tl.Generator(device), device=_other_type(device))


def _other_type(device):
    others = [d for d in tl.backends.available() if d.split(":")[0] != device.split(":")[0]]
    if not others:
        pytest.skip("needs a second device type")
    return others[0]


# ---- autograd -----------------------------------------------------------------------------

def test_draws_are_leaves():
    x = tl.rand(3, requires_grad=True)
    assert x.requires_grad and x.grad_fn is None and x.is_leaf
    p = tl.full((3,), 0.5, requires_grad=True)
    assert tl.bernoulli(p).grad_fn is None
    assert tl.multinomial(p, 2).grad_fn is None
    with pytest.raises(RuntimeError, match="leaf Variable"):
        tl.zeros(3, requires_grad=True).uniform_()
    with tl.no_grad():                            # nn.init style
        w = tl.zeros(3, requires_grad=True).normal_()
    assert w.requires_grad and w.grad_fn is None


def test_in_place_draws_bump_the_version():
    x = tl.zeros(4)
    v = x._version
    x.uniform_()
    x.normal_()
    assert x._version >= v + 2


def test_normal_with_tensor_arguments_is_differentiable():
    mean = tl.tensor([0.0, 1.0, 2.0], dtype=tl.float64, requires_grad=True)
    std = tl.tensor([1.0, 2.0, 0.5], dtype=tl.float64, requires_grad=True)
    g = tl.Generator().manual_seed(4)
    y = tl.normal(mean, std, generator=g)
    y.sum().backward()
    z = (y.detach() - mean.detach()) / std.detach()
    np.testing.assert_allclose(host(mean.grad), np.ones(3))
    np.testing.assert_allclose(host(std.grad), host(z))
    assert tl.normal(tl.zeros(2), tl.ones(2, dtype=tl.float64)).dtype is tl.float32
    assert tl.normal(2.0, tl.ones(2, dtype=tl.float64)).dtype is tl.float64

    def fn(m, s):
        return tl.normal(m, s, generator=tl.Generator().manual_seed(4))
    assert tl.autograd.gradcheck(fn, (mean, std))


@pytest.mark.parametrize("dtype", [tl.complex64, tl.complex128])
def test_complex_draws_have_pytorchs_distribution(dtype):
    # rand: each part uniform in [0, 1); randn: variance 1 in all, 1/2 in each part;
    # uniform_/normal_ of a complex tensor (a complex nn.Linear's init) likewise
    tl.manual_seed(3)
    n = 200_000
    u = tl.rand(n, dtype=dtype)
    z = tl.randn(n, dtype=dtype)
    assert u.dtype == dtype and z.dtype == dtype
    for part in (u.real, u.imag):
        assert 0 <= part.min().item() and part.max().item() < 1
        assert abs(part.mean().item() - 0.5) < 0.01
    for part in (z.real, z.imag):
        assert abs(part.mean().item()) < 0.01 and abs(part.var().item() - 0.5) < 0.01
    t = tl.empty(n, dtype=dtype)
    t.uniform_(-2, 1)
    assert -2 <= t.real.min().item() and t.imag.max().item() < 1
    t.normal_(3.0, 2.0)
    assert abs(t.real.mean().item() - 3.0) < 0.02 and abs(t.imag.mean().item() - 3.0) < 0.02
    assert abs(t.imag.var().item() - 2.0) < 0.05          # (2 / sqrt 2) ** 2 per part
    weight = tl.nn.Linear(4, 3, dtype=dtype).weight
    assert weight.dtype == dtype and (weight.imag != 0).any()
