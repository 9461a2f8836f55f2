"""The CPU fused kernels' float32 exp (codegen.py's tl_expf, vexp.h's algorithm in C that
the compiler vectorises): within an ulp of float64 over the whole range, IEEE special values
and subnormal results as the eager kernel gives them, and bit for bit the eager exp where
that runs on vexp.h."""
import numpy as np
import pytest

import tensorlib as tl

pytest.importorskip("tensorlib_cpu.codegen")


def _compiled_exp(x):
    tl.compiler.reset()
    f = tl.compile(lambda t: (t * 1.0).exp())
    return f(tl.tensor(x)).numpy()


def test_within_an_ulp_and_special_values():
    rng = np.random.default_rng(3)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72283, 88.7229, 100.0,
                         -87.33655, -95.0, -103.2, -103.98, -104.0, -200.0, 1e-30], np.float32)
    x = np.concatenate([rng.uniform(-104, 89, 200_003).astype(np.float32), specials])
    got = _compiled_exp(x)
    with np.errstate(over="ignore", under="ignore"):
        want = np.exp(x.astype(np.float64))
        spacing = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
        finite = np.isfinite(want.astype(np.float32)) & (want >= np.finfo(np.float32).tiny)
        want_tail = want[-len(specials):].astype(np.float32)
    assert (np.abs(got[finite] - want[finite]) / spacing[finite]).max() <= 1.0
    tail = got[-len(specials):]
    assert np.isnan(tail[0])
    np.testing.assert_array_equal(np.isinf(tail), np.isinf(want_tail))
    np.testing.assert_array_equal(tail == 0, want_tail == 0)
    sub = (want_tail > 0) & (want_tail < np.finfo(np.float32).tiny)
    assert sub.sum() >= 2 and np.all(tail[sub] > 0)          # not flushed to zero


def test_equals_the_eager_exp():
    """The eager float32 exp runs vexp.h on AVX-512 builds; the compiled one the same
    formulas, so a compiled model gives the eager values there."""
    x = np.random.default_rng(4).uniform(-110, 95, 50_001).astype(np.float32)
    eager = tl.tensor(x).exp().numpy()
    got = _compiled_exp(x)
    from tensorlib_cpu import activation_kernels
    if not activation_kernels.VEXP:
        with np.errstate(over="ignore"):
            np.testing.assert_allclose(got, eager, rtol=3e-7, atol=0)
    else:
        np.testing.assert_array_equal(got.view(np.uint32), eager.view(np.uint32))


def test_every_tail_length_equals_the_eager_exp():
    """The vectorised loop calls the 16- and 8-lane variants and the scalar function for
    what is left: every length up to 40 gives the eager values."""
    from tensorlib_cpu import activation_kernels
    x = np.random.default_rng(5).uniform(-105, 90, 40).astype(np.float32)
    tl.compiler.reset()
    f = tl.compile(lambda t: (t * 1.0).exp())
    for n in range(1, 41):
        got = f(tl.tensor(x[:n])).numpy()
        eager = tl.tensor(x[:n]).exp().numpy()
        if activation_kernels.VEXP:
            np.testing.assert_array_equal(got.view(np.uint32), eager.view(np.uint32))
        else:
            with np.errstate(over="ignore"):
                np.testing.assert_allclose(got, eager, rtol=3e-7, atol=0)
