"""TENSORLIB_RNG=pytorch: after the same manual_seed, CPU draws equal PyTorch's (uniforms and
integers bit for bit, transcendental transforms to a few ulp), state bytes included. Each
test switches the mode on and restores it (the suite runs in random order)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.random as tl_random

torch = pytest.importorskip("torch")


def _intel_mkl_bernoulli():
    """PyTorch's bernoulli_(float p) takes MKL's VSL stream on Intel CPUs in MKL builds."""
    try:
        with open("/proc/cpuinfo") as f:
            intel = "GenuineIntel" in f.read()
    except OSError:
        intel = False
    return intel and torch.backends.mkl.is_available()


needs_portable_bernoulli = pytest.mark.skipif(
    _intel_mkl_bernoulli(), reason="on Intel CPUs PyTorch's MKL build draws bernoulli_(p) from "
                                   "MKL's VSL stream, which pytorch mode does not follow")

DTYPES = {"float32": (tl.float32, torch.float32), "float64": (tl.float64, torch.float64),
          "float16": (tl.float16, torch.float16), "bfloat16": (tl.bfloat16, torch.bfloat16)}
SIZES = list(range(1, 18)) + [31, 1000, 100000]


def seed(s):
    torch.manual_seed(s)
    tl.manual_seed(s)


def host(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype in (torch.bfloat16, torch.float16) else t).numpy()
    t = t.detach()
    return (t.float() if t.dtype in (tl.bfloat16, tl.float16) else t).numpy()


def assert_exact(ours, theirs):
    a, b = host(ours), host(theirs)
    assert a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def assert_close(ours, theirs, ulps=4):
    if not np.issubdtype(host(theirs).dtype, np.floating):
        return assert_exact(ours, theirs)
    a, b = host(ours).astype(np.float64), host(theirs).astype(np.float64)
    assert a.shape == b.shape
    eps = {torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7}.get(theirs.dtype,
                                                                  np.finfo(host(theirs).dtype).eps)
    scale = np.maximum(np.abs(b), 1.0) * eps * ulps
    assert np.all(np.abs(a - b) <= scale), np.abs(a - b).max()


def assert_same_state():
    np.testing.assert_array_equal(tl.get_rng_state().numpy(), torch.get_rng_state().numpy())


# ---- state ----------------------------------------------------------------------------------

@pytest.mark.parametrize("s", [0, 1, 42, 2**32 + 7, 2**63 + 5, -3])
def test_seeded_state_bytes_equal_pytorch(pytorch_stream, s):
    seed(s)
    assert tl.get_rng_state().numel() == 5056
    assert_same_state()
    assert tl.initial_seed() == torch.initial_seed()


def test_state_round_trip_keeps_cached_normal(pytorch_stream):
    seed(3)
    tl.randn(3)                      # serial path: one Box-Muller pair half used
    torch.randn(3)
    assert_same_state()
    state = tl.get_rng_state()
    a = tl.randn(5)
    tl.set_rng_state(state)
    assert_exact(tl.randn(5), a)
    tl.set_rng_state(tl.tensor(torch.get_rng_state().numpy()))   # PyTorch's bytes restore ours
    assert_close(tl.randn(7), torch.randn(7))


def test_set_state_reads_fields_as_pytorch(pytorch_stream):
    seed(4)
    torch.randn(1)                                     # a cached double normal
    raw = torch.get_rng_state().numpy().copy()
    raw[5016:5024] = 7                                 # unused legacy normal_x
    raw[12] = 5                                        # seeded: any non-zero int
    raw[5048:5052] = 9                                 # a float sample not flagged valid
    torch.set_rng_state(torch.tensor(raw))
    tl.set_rng_state(tl.tensor(raw))
    assert_same_state()
    assert_close(tl.randn(3), torch.randn(3))


def test_set_state_checks(pytorch_stream):
    with pytest.raises(RuntimeError, match="5056"):
        tl.set_rng_state(tl.zeros(16, dtype=tl.uint8))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        tl.set_rng_state(tl.zeros(5056, dtype=tl.uint8))


def test_set_stream_restarts_default_generator_and_restores(pytorch_stream):
    tl.manual_seed(11)
    tl.rand(3)
    tl_random.set_stream("pytorch")      # restart at the initial seed
    torch.manual_seed(11)
    assert_exact(tl.rand(4), torch.rand(4))
    with pytest.raises(ValueError):
        tl_random.set_stream("mersenne")


def test_philox_mode_is_unchanged():
    assert tl_random.get_stream() == "philox"
    tl.manual_seed(5)
    assert tl.get_rng_state().numel() == 16


# ---- uniforms and normals -------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_rand_and_uniform(pytorch_stream, n, dtype):
    ours, theirs = DTYPES[dtype]
    seed(n)
    assert_exact(tl.rand(n, dtype=ours), torch.rand(n, dtype=theirs))
    assert_exact(tl.empty(n, dtype=ours).uniform_(-2.5, 0.75),
                 torch.empty(n, dtype=theirs).uniform_(-2.5, 0.75))
    assert_same_state()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_randn_and_normal(pytorch_stream, n, dtype):
    ours, theirs = DTYPES[dtype]
    seed(n + 100)
    assert_close(tl.randn(n, dtype=ours), torch.randn(n, dtype=theirs))
    assert_close(tl.empty(n, dtype=ours).normal_(0.5, 3.0),
                 torch.empty(n, dtype=theirs).normal_(0.5, 3.0), ulps=8)
    assert_same_state()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("layout", ["transposed", "sliced", "permuted"])
def test_non_contiguous_fills_visit_memory_order(pytorch_stream, dtype, layout):
    ours, theirs = DTYPES[dtype]

    def view(lib, d):
        if layout == "transposed":
            return lib.empty(40, 30, dtype=d).t()
        if layout == "sliced":
            return lib.empty(20, 30, dtype=d)[:, ::3]
        return lib.empty(4, 5, 6, dtype=d).permute(2, 0, 1)

    seed(9)
    for fill in (lambda t: t.uniform_(-1, 1), lambda t: t.normal_(1.0, 2.0),
                 lambda t: t.random_(0, 1000), lambda t: t.exponential_(1.5),
                 lambda t: t.cauchy_(0.0, 0.5), lambda t: t.log_normal_(0.0, 0.25),
                 lambda t: t.geometric_(0.3)):
        a, b = fill(view(tl, ours)), fill(view(torch, theirs))
        assert_close(a, b, ulps=8)
    assert_same_state()


def test_like_factories_follow_input_layout(pytorch_stream):
    seed(4)
    x_t = torch.empty(6, 7).t()
    x_l = tl.empty(6, 7).t()
    assert_exact(tl.rand_like(x_l), torch.rand_like(x_t))
    assert_close(tl.randn_like(x_l), torch.randn_like(x_t))
    assert_exact(tl.randint_like(x_l, 3, 40), torch.randint_like(x_t, 3, 40))
    y_t = torch.empty(2, 3, 5, 5).to(memory_format=torch.channels_last)
    y_l = tl.empty(2, 3, 5, 5).to(memory_format=tl.channels_last)
    assert_close(tl.randn_like(y_l), torch.randn_like(y_t))
    assert_same_state()


def test_normal_functional_forms(pytorch_stream):
    mean_t, std_t = torch.linspace(-1, 1, 40), torch.linspace(0.1, 2, 40)
    mean_l, std_l = tl.linspace(-1, 1, 40), tl.linspace(0.1, 2, 40)
    seed(21)
    for a, b in [(tl.normal(mean_l, std_l), torch.normal(mean_t, std_t)),
                 (tl.normal(mean_l, 0.5), torch.normal(mean_t, 0.5)),
                 (tl.normal(0.5, std_l), torch.normal(0.5, std_t)),
                 (tl.normal(1.0, 2.0, (5, 7)), torch.normal(1.0, 2.0, (5, 7))),
                 (tl.normal(mean_l[:9], std_l[:9]), torch.normal(mean_t[:9], std_t[:9]))]:
        assert_close(a, b, ulps=8)
    assert_same_state()


def test_normal_tensor_form_gradients(pytorch_stream):
    mean = tl.linspace(-1, 1, 20, dtype=tl.float64).requires_grad_(True)
    std = tl.linspace(0.5, 2, 20, dtype=tl.float64).requires_grad_(True)
    seed(2)
    out = tl.normal(mean, std)
    assert_close(out, torch.normal(torch.linspace(-1, 1, 20, dtype=torch.float64),
                                   torch.linspace(0.5, 2, 20, dtype=torch.float64)))
    out.sum().backward()
    np.testing.assert_array_equal(mean.grad.numpy(), np.ones(20))
    np.testing.assert_allclose(std.grad.numpy(), ((out - mean) / std).detach().numpy(),
                               rtol=1e-12)


def test_complex_draws(pytorch_stream):
    seed(8)
    assert_exact(tl.rand(9, dtype=tl.complex64), torch.rand(9, dtype=torch.complex64))
    a, b = tl.randn(20, dtype=tl.complex128), torch.randn(20, dtype=torch.complex128)
    assert_close(tl.view_as_real(a), torch.view_as_real(b))
    a = tl.empty(20, dtype=tl.complex64).normal_(5.0, 0.3)      # the mean goes to both parts
    b = torch.empty(20, dtype=torch.complex64).normal_(5.0, 0.3)
    assert_close(tl.view_as_real(a), torch.view_as_real(b))
    assert_same_state()


# ---- integers -------------------------------------------------------------------------------

@pytest.mark.parametrize("low,high", [(0, 2), (0, 10), (-7, 7), (5, 2**28 - 1),
                                      (0, 2**28), (-2**40, 2**40), (-2**63, 2**63 - 1)])
@pytest.mark.parametrize("n", [1, 16, 17, 1000])
def test_randint_ranges(pytorch_stream, low, high, n):
    seed(n)
    assert_exact(tl.randint(low, high, (n,)), torch.randint(low, high, (n,)))
    assert_same_state()


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool",
                                   "float32", "float64", "float16", "bfloat16"])
def test_random_without_bounds_and_open_top(pytorch_stream, dtype):
    ours, theirs = getattr(tl, dtype), getattr(torch, dtype)
    seed(2)
    assert_exact(tl.empty(300, dtype=ours).random_(), torch.empty(300, dtype=theirs).random_())
    if dtype != "bool":
        assert_exact(tl.empty(300, dtype=ours).random_(3),
                     torch.empty(300, dtype=theirs).random_(3))
        assert_exact(tl.empty(50, dtype=ours).random_(1, None),
                     torch.empty(50, dtype=theirs).random_(1, None))
    assert_same_state()


def test_random_full_int64_range(pytorch_stream):
    seed(6)
    assert_exact(tl.empty(100, dtype=tl.int64).random_(-2**63, None),
                 torch.empty(100, dtype=torch.int64).random_(-2**63, None))
    assert_same_state()


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1000, 100000])
def test_randperm(pytorch_stream, n):
    seed(n)
    assert_exact(tl.randperm(n), torch.randperm(n))
    assert_exact(tl.randperm(n, dtype=tl.int32), torch.randperm(n, dtype=torch.int32))
    assert_same_state()


# ---- bernoulli, dropout, multinomial --------------------------------------------------------

@needs_portable_bernoulli
@pytest.mark.parametrize("n", [1, 17, 1000, 100000])
def test_bernoulli(pytorch_stream, n):
    p_t = torch.linspace(0, 1, n)
    p_l = tl.linspace(0, 1, n)
    seed(n)
    assert_exact(tl.empty(n).bernoulli_(0.3), torch.empty(n).bernoulli_(0.3))
    assert_exact(tl.bernoulli(p_l), torch.bernoulli(p_t))
    assert_exact(tl.bernoulli(p_l.double()), torch.bernoulli(p_t.double()))
    assert_exact(tl.empty(n, dtype=tl.int64).bernoulli_(p_l), torch.empty(n, dtype=torch.int64)
                 .bernoulli_(p_t))
    assert_exact(tl.bernoulli(p_l, 0.7), torch.bernoulli(p_t, 0.7))
    assert_exact(tl.empty(3, n).t().bernoulli_(0.4), torch.empty(3, n).t().bernoulli_(0.4))
    column_t = torch.linspace(0.1, 0.9, n).reshape(n, 1)         # broadcast over a transposed self
    assert_exact(tl.empty(3, n).t().bernoulli_(tl.tensor(column_t.numpy())),
                 torch.empty(3, n).t().bernoulli_(column_t))
    grid_t = torch.linspace(0, 1, 3 * n).reshape(3, n).t()        # a transposed p
    grid_l = tl.linspace(0, 1, 3 * n).reshape(3, n).t()
    assert_exact(tl.bernoulli(grid_l), torch.bernoulli(grid_t))
    assert_same_state()


@needs_portable_bernoulli
def test_dropout_masks(pytorch_stream):
    x = np.random.default_rng(0).standard_normal((8, 6, 5, 5)).astype(np.float32)
    xt, xl = torch.tensor(x), tl.tensor(x)
    seed(12)
    for p in (0.1, 0.5, 0.77):
        assert_exact(tl.nn.functional.dropout(xl, p), torch.nn.functional.dropout(xt, p))
        assert_exact(tl.nn.Dropout(p)(xl), torch.nn.Dropout(p)(xt))
        assert_exact(tl.nn.functional.dropout2d(xl, p), torch.nn.functional.dropout2d(xt, p))
    assert_exact(tl.nn.functional.dropout(xl.transpose(1, 3), 0.3),
                 torch.nn.functional.dropout(xt.transpose(1, 3), 0.3))
    cl_t, cl_l = xt.to(memory_format=torch.channels_last), xl.to(memory_format=tl.channels_last)
    assert_exact(tl.nn.functional.dropout(cl_l, 0.4), torch.nn.functional.dropout(cl_t, 0.4))
    xl_g = tl.tensor(x, requires_grad=True)
    out = tl.nn.functional.dropout(xl_g, 0.25)
    assert_exact(out, torch.nn.functional.dropout(torch.tensor(x, requires_grad=True), 0.25))
    out.sum().backward()
    assert_exact(xl_g.grad, (out.detach() != 0).float() / 0.75)
    assert_same_state()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial(pytorch_stream, dtype):
    ours, theirs = DTYPES[dtype]
    probs = np.random.default_rng(1).random((4, 30))
    probs[:, 3] = 0
    pt, pl = torch.tensor(probs, dtype=theirs), tl.tensor(probs, dtype=ours)
    seed(5)
    assert_exact(tl.multinomial(pl, 1), torch.multinomial(pt, 1))
    assert_exact(tl.multinomial(pl, 6), torch.multinomial(pt, 6))
    assert_exact(tl.multinomial(pl, 50, True), torch.multinomial(pt, 50, True))
    assert_exact(tl.multinomial(pl[0], 40, True), torch.multinomial(pt[0], 40, True))
    assert_same_state()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_continuous_fills(pytorch_stream, dtype):
    ours, theirs = DTYPES[dtype]
    seed(30)
    for n in (1, 16, 17, 1000):
        assert_close(tl.empty(n, dtype=ours).exponential_(2.5),
                     torch.empty(n, dtype=theirs).exponential_(2.5))
        assert_close(tl.empty(n, dtype=ours).cauchy_(0.3, 1.5),
                     torch.empty(n, dtype=theirs).cauchy_(0.3, 1.5), ulps=16)
        assert_close(tl.empty(n, dtype=ours).log_normal_(0.2, 0.5),
                     torch.empty(n, dtype=theirs).log_normal_(0.2, 0.5))
        assert_exact(tl.empty(n, dtype=ours).geometric_(0.2),
                     torch.empty(n, dtype=theirs).geometric_(0.2))
    assert_exact(tl.empty(40, dtype=tl.int32).geometric_(0.6),
                 torch.empty(40, dtype=torch.int32).geometric_(0.6))
    assert_same_state()


# ---- sequences, generators, initialisation --------------------------------------------------

def test_mixed_call_sequence(pytorch_stream):
    seed(77)
    steps = [
        lambda lib: lib.rand(3, 4),
        lambda lib: lib.randn(5),                            # serial: leaves a cached normal
        lambda lib: lib.randn(33),                           # block path: cache untouched
        lambda lib: lib.empty(2, dtype=lib.float64).normal_(),  # uses the cached sample
        lambda lib: lib.randint(0, 100, (9,)),
        lambda lib: lib.randperm(12),
        lambda lib: lib.empty(7).exponential_(),
        lambda lib: lib.rand(2, dtype=lib.float64),
        lambda lib: lib.empty(3).log_normal_(),
    ]
    for step in steps:
        assert_close(step(tl), step(torch))
        assert_same_state()


def test_explicit_generators(pytorch_stream):
    g_l, g_t = tl.Generator().manual_seed(123), torch.Generator().manual_seed(123)
    np.testing.assert_array_equal(g_l.get_state().numpy(), g_t.get_state().numpy())
    assert_exact(tl.rand(10, generator=g_l), torch.rand(10, generator=g_t))
    assert_close(tl.randn(20, generator=g_l), torch.randn(20, generator=g_t))
    assert_exact(tl.randperm(30, generator=g_l), torch.randperm(30, generator=g_t))
    assert_exact(tl.randint(0, 9, (5,), generator=g_l), torch.randint(0, 9, (5,), generator=g_t))
    np.testing.assert_array_equal(g_l.get_state().numpy(), g_t.get_state().numpy())
    g_l.set_state(tl.tensor(g_t.get_state().numpy()))
    assert_close(tl.randn(3, generator=g_l), torch.randn(3, generator=g_t))
    assert g_l.initial_seed() == g_t.initial_seed() == 123


def test_default_module_initialisation(pytorch_stream):
    for s in (0, 1234):
        seed(s)
        pairs = [(tl.nn.Linear(20, 30), torch.nn.Linear(20, 30)),
                 (tl.nn.Conv2d(3, 8, 3), torch.nn.Conv2d(3, 8, 3)),
                 (tl.nn.Linear(7, 1), torch.nn.Linear(7, 1)),
                 (tl.nn.Embedding(10, 16), torch.nn.Embedding(10, 16))]
        for ours, theirs in pairs:
            for (name, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
                if isinstance(ours, tl.nn.Embedding):
                    assert_close(a, b)
                else:
                    assert_exact(a, b)
        assert_same_state()


@pytest.mark.parametrize("init", ["xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
                                  "kaiming_normal_", "uniform_", "normal_"])
def test_nn_init(pytorch_stream, init):
    seed(3)
    a = getattr(tl.nn.init, init)(tl.empty(24, 40))
    b = getattr(torch.nn.init, init)(torch.empty(24, 40))
    assert_close(a, b)
    assert_same_state()


def test_trunc_normal_orthogonal_and_sparse_init(pytorch_stream):
    seed(13)
    for args in [(0.1, 0.02, -0.05, 0.2), (0.0, 1.0, -2.0, 2.0), (0.0, 1.0, 1.5, 3.0),
                 (0.5, 0.1, -1.0, 0.45)]:                  # high mass: redraws; low: proposals
        assert_close(tl.nn.init.trunc_normal_(tl.empty(30, 20), *args),
                     torch.nn.init.trunc_normal_(torch.empty(30, 20), *args), ulps=16)
    assert_close(tl.nn.init.orthogonal_(tl.empty(6, 9)),
                 torch.nn.init.orthogonal_(torch.empty(6, 9)),
                 ulps=64)
    assert_close(tl.nn.init.sparse_(tl.empty(8, 5), 0.5),
                 torch.nn.init.sparse_(torch.empty(8, 5), 0.5))
    assert_same_state()


def test_unsigned_random_without_bounds_is_refused_as_pytorch(pytorch_stream):
    with pytest.raises(NotImplementedError, match="random_kernel_cpu"):
        tl.empty(3, dtype=tl.uint16).random_()
    seed(1)
    assert_exact(tl.empty(9, dtype=tl.uint16).random_(0, 5),
                 torch.empty(9, dtype=torch.uint16).random_(0, 5))


@pytest.mark.parametrize("make", [
    lambda lib: lib.distributions.Normal(lib.zeros(5), lib.ones(5)).rsample((3,)),
    lambda lib: lib.distributions.Uniform(lib.zeros(5), lib.ones(5)).sample((3,)),
    lambda lib: lib.distributions.Bernoulli(probs=lib.full((5,), 0.3)).sample((3,)),
    lambda lib: lib.distributions.Categorical(probs=lib.tensor([0.1, 0.2, 0.7])).sample((6,)),
    lambda lib: lib.distributions.Categorical(logits=lib.tensor([[0.1, 2.0], [1.5, 0.3]])).sample(),
    lambda lib: lib.distributions.OneHotCategorical(probs=lib.tensor([0.3, 0.7])).sample((4,)),
    lambda lib: lib.distributions.Exponential(lib.ones(5)).sample((2,)),
    lambda lib: lib.distributions.Laplace(lib.zeros(5), lib.ones(5)).sample((2,)),
    lambda lib: lib.distributions.LogNormal(lib.zeros(5), lib.ones(5)).sample((2,)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(3), lib.eye(3)).sample((4,)),
    lambda lib: lib.distributions.Gamma(lib.tensor([0.3, 1.0, 4.0]), lib.ones(3)).rsample((5,)),
    lambda lib: lib.distributions.Gamma(lib.tensor([0.3, 50.0], dtype=lib.float64),
                                        lib.tensor([1.0, 2.0], dtype=lib.float64)).sample((7,)),
    lambda lib: lib.distributions.Poisson(lib.tensor([0.0, 0.5, 3.0, 30.0, 900.0])).sample((5,)),
    lambda lib: lib.poisson(lib.tensor([[0.5, 9.99], [10.0, 123.0]], dtype=lib.float64)),
    lambda lib: lib.distributions.Dirichlet(lib.tensor([0.3, 1.0, 4.0])).sample((5,)),
    lambda lib: lib.distributions.Beta(lib.tensor([0.3, 2.0]), lib.tensor([1.5, 0.7])).sample((5,)),
    lambda lib: lib.distributions.StudentT(lib.tensor([3.0, 10.0])).sample((5,)),
    lambda lib: lib.distributions.Chi2(lib.tensor([3.0, 10.0])).sample((5,)),
    lambda lib: lib.binomial(lib.tensor([0.0, 1, 5, 20, 100, 1000, 7, 50] * 4),
                             lib.tensor([0.0, 0.3, 0.5, 0.9, 0.05, 0.7, 1.0, 0.2] * 4)),
    lambda lib: lib.distributions.Binomial(lib.tensor([10.0, 200.0], dtype=lib.float64),
                                           probs=lib.tensor([0.3, 0.6], dtype=lib.float64))
    .sample((6,)),
    lambda lib: lib.distributions.NegativeBinomial(lib.tensor([3.0, 10.0]),
                                                   probs=lib.tensor([0.3, 0.6])).sample((5,)),
])
def test_distribution_samples(pytorch_stream, make):
    seed(3)
    assert_close(make(tl), make(torch))
    assert_same_state()


def test_data_shuffling_and_random_split(pytorch_stream):
    def batches(lib):
        lib.manual_seed(7)
        loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(20)),
                                           batch_size=5, shuffle=True)
        return [b[0].tolist() for _ in range(2) for b in loader]

    def splits(lib, generator=None):
        lib.manual_seed(3)
        return [list(s.indices) for s in lib.utils.data.random_split(range(10), [3, 7],
                                                                     generator=generator)]

    assert batches(tl) == batches(torch)
    assert splits(tl) == splits(torch)
    assert splits(tl, tl.Generator().manual_seed(5)) == \
        splits(torch, torch.Generator().manual_seed(5))


_SCRIPT = """
import torch
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.5), torch.nn.Linear(8, 2))
x = torch.randn(3, 4)
print(repr(net(x).detach().flatten().tolist()))
print(repr(torch.randint(0, 1000, (6,)).tolist()), repr(torch.randperm(8).tolist()))
print(repr(torch.rand(4, dtype=torch.float64).tolist()))
"""


def test_program_under_torch_alias_prints_pytorchs_numbers(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(_SCRIPT))
    env = dict(os.environ, TENSORLIB_RNG="pytorch")
    ours = subprocess.run([sys.executable, "-m", "tensorlib.torch_compat", str(script)],
                          capture_output=True, text=True, timeout=300, env=env)
    theirs = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=300)
    assert ours.returncode == 0, ours.stderr
    assert theirs.returncode == 0, theirs.stderr
    ours_lines, theirs_lines = ours.stdout.splitlines(), theirs.stdout.splitlines()
    assert ours_lines[1:] == theirs_lines[1:]
    np.testing.assert_allclose(eval(ours_lines[0]), eval(theirs_lines[0]), rtol=1e-5, atol=1e-6)


def test_unknown_stream_name_warns(tmp_path):
    env = dict(os.environ, TENSORLIB_RNG="bogus")
    code = "import tensorlib.random as r; print(r.get_stream())"
    proc = subprocess.run([sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "philox"
    assert "TENSORLIB_RNG='bogus'" in proc.stderr
