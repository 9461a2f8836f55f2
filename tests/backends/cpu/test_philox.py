"""Philox4x32-10 reference RNG: known answers, the documented word mapping, offset/slice
invariance (what makes results backend- and chunking-independent), and sanity statistics."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tensorlib_cpu import philox

U32 = 0xFFFFFFFF
KAT = [  # Random123 kat_vectors, philox4x32_10
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((U32,) * 4, (U32, U32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("ctr,key,expect", KAT)
def test_known_answers(ctr, key, expect):
    out = philox.philox4x32(np.array([ctr], np.uint32), np.array(key, np.uint32))
    assert out.dtype == np.uint32 and out.shape == (1, 4)
    assert tuple(int(v) for v in out[0]) == expect


def test_known_answers_batched_per_row_keys():
    ctr = np.array([c for c, _, _ in KAT], np.uint32)
    key = np.array([k for _, k, _ in KAT], np.uint32)
    np.testing.assert_array_equal(philox.philox4x32(ctr, key), np.array([e for *_, e in KAT], np.uint32))


@pytest.mark.parametrize("seed", [0, 1, 0xDEADBEEF_12345678, 2**64 - 1])
@pytest.mark.parametrize("offset", [0, 3, 2**34 + 1, 2**64 - 6])
def test_word_mapping_matches_docstring(seed, offset):
    n = 9  # crosses block boundaries; the last offset also wraps mod 2**64
    got = philox.uniform_uint32(seed, offset, n)
    for j in range(n):
        g = (offset + j) % 2**64
        b, lane = g // 4, g % 4
        ctr = np.array([[b & U32, b >> 32, 0, 0]], np.uint32)
        key = np.array([seed & U32, seed >> 32], np.uint32)
        assert got[j] == philox.philox4x32(ctr, key)[0, lane]


def _draw(kind, seed, off, n):
    if kind == "u32":
        return philox.uniform_uint32(seed, off, n)
    if kind == "randint":
        return philox.randint(seed, off, n, -7, 1000)
    fn, dt = kind.split("-")
    return getattr(philox, fn)(seed, off, n, np.dtype(dt))


KINDS = ["u32", "randint", "uniform-float32", "uniform-float64", "uniform-float16",
         "normal-float32", "normal-float64"]
WPN = {"u32": 1, "randint": 2, "uniform-float64": 2, "normal-float64": 2}


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(KINDS), seed=st.integers(0, 2**64 - 1),
       off=st.integers(0, 2**63), n=st.integers(1, 40), data=st.data())
def test_slice_equals_offset_request(kind, seed, off, n, data):
    a = data.draw(st.integers(0, n - 1))
    b = data.draw(st.integers(a + 1, n))
    k = WPN.get(kind, 1)
    full = _draw(kind, seed, off, n)
    assert full.shape == (n,)
    np.testing.assert_array_equal(full[a:b], _draw(kind, seed, off + k * a, b - a))


def test_words_per_number():
    assert [philox.words_per_number(d) for d in (np.float16, np.float32, np.float64, np.int64)] == [1, 1, 2, 2]


def test_deterministic_and_seed_sensitive():
    a = philox.uniform(42, 0, 1000)
    np.testing.assert_array_equal(a, philox.uniform(42, 0, 1000))
    assert not np.array_equal(a, philox.uniform(43, 0, 1000))
    assert not np.array_equal(a, philox.uniform(42 + 2**32, 0, 1000))  # high seed word matters
    assert not np.array_equal(a, philox.uniform(42, 1000, 1000))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_uniform_extremes_stay_in_unit_interval(dtype, monkeypatch):
    """All-ones words give the largest uniform; it must round to < 1, never 1.0."""
    if dtype == "bfloat16":
        dtype = pytest.importorskip("ml_dtypes").bfloat16
    dt = np.dtype(dtype)
    for fill in (0, U32):
        monkeypatch.setattr(philox, "_words", lambda s, o, c, f=fill: np.full(c, f, np.uint32))
        u = philox.uniform(0, 0, 8, dt).astype(np.float64)
        assert u.dtype == np.float64 and ((u >= 0) & (u < 1)).all()
        z = philox.normal(0, 0, 8, dt).astype(np.float64)  # u1 in (0, 1]: no log(0)
        assert np.isfinite(z).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_statistics(dtype):
    u = philox.uniform(1234, 0, 10**6, dtype)
    assert u.dtype == dtype and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 2e-3 and abs(u.var() - 1 / 12) < 1e-3
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 5e-3
    hist = np.bincount((u * 16).astype(int), minlength=16)
    assert np.all(np.abs(hist / 10**6 - 1 / 16) < 2e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_statistics(dtype):
    z = philox.normal(99, 0, 10**6, dtype)
    assert z.dtype == dtype and np.isfinite(z).all()
    for part in (z, z[0::2], z[1::2]):  # cos and sin halves are each N(0, 1)
        assert abs(part.mean()) < 5e-3 and abs(part.var() - 1) < 1e-2
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 3e-3
    assert abs(np.mean(z ** 3)) < 2e-2 and abs(np.mean(z ** 4) - 3) < 5e-2
    assert abs(np.corrcoef(z[0::2], z[1::2])[0, 1]) < 5e-3


def test_randint_range_and_uniformity():
    r = philox.randint(7, 0, 10**6, -3, 7)
    assert r.dtype == np.int64 and r.min() == -3 and r.max() == 6
    assert np.all(np.abs(np.bincount(r + 3) / 10**6 - 0.1) < 3e-3)
    big = philox.randint(7, 0, 1000, -(2**62), 2**62)
    assert big.min() >= -(2**62) and big.max() < 2**62 and big.min() < -(2**60) < 2**60 < big.max()
    with pytest.raises(ValueError):
        philox.randint(0, 0, 4, 5, 5)


def test_number_formulas_match_docstring():
    """The word -> number rules the GPU kernels must reproduce bit-exactly."""
    w = philox.uniform_uint32(5, 12, 64).astype(np.uint64)
    u32 = philox.uniform(5, 12, 64, np.float32)
    np.testing.assert_array_equal(u32, ((w >> 8).astype(np.float64) * 2.0**-24).astype(np.float32))
    u64 = philox.uniform(5, 12, 32, np.float64)
    np.testing.assert_array_equal(u64, ((w[0::2] >> 5) * 2**26 + (w[1::2] >> 6)) * 2.0**-53)
    r = philox.randint(5, 12, 32, -10, 1000)
    np.testing.assert_array_equal(r, (w[0::2] | (w[1::2] << np.uint64(32))) % 1010 - 10)
    u1 = 1.0 - (w[0::2] >> 8) * 2.0**-24
    t = 2 * np.pi * (w[1::2] >> 8) * 2.0**-24
    z = np.stack([np.sqrt(-2 * np.log(u1)) * np.cos(t), np.sqrt(-2 * np.log(u1)) * np.sin(t)], 1)
    np.testing.assert_allclose(philox.normal(5, 12, 64, np.float32), z.reshape(-1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("start", [0, 1, 2, 3, 4 * 16 * 5 + 2])
def test_vector_blocks_equal_single_blocks(start):
    """philox16 (16 blocks in AVX-512 lanes, threaded past 2^14 blocks) gives the words the
    one-block rounds give: the reference's 4-word requests run one block at a time."""
    seed = 0xDEADBEEF_12345678
    count = 4 * (1 << 15) + 37
    got = philox.uniform_uint32(seed, start, count)
    b0 = start // 4
    blocks = [philox.uniform_uint32(seed, 4 * (b0 + i), 4) for i in range(0, count // 4 + 2, 997)]
    for i, block in zip(range(0, count // 4 + 2, 997), blocks):
        lo = 4 * (b0 + i) - start
        want = block[max(0, -lo):min(4, count - lo)]
        np.testing.assert_array_equal(got[max(lo, 0):max(lo, 0) + len(want)], want)
    np.testing.assert_array_equal(got[:40], np.concatenate(
        [philox.uniform_uint32(seed, 4 * (b0 + i), 4) for i in range(11)])[start % 4:start % 4 + 40])


@pytest.mark.parametrize("dtype,tol", [(np.float32, 3e-6), (np.float64, 1e-13)])
@pytest.mark.parametrize("offset", [0, 1, 2, 3])
def test_vector_normals_match_the_formula(dtype, tol, offset):
    """The libmvec Box-Muller (16 or 8 pairs a vector, the last group padded) against the
    documented formula in float64, past the threads' minimum and at every word alignment."""
    n = 2 * (1 << 15) + 23
    k = philox.words_per_number(dtype)
    pairs = n // 2 + 2
    w = philox.uniform_uint32(9, offset * k - (offset * k) % (2 * k), 2 * pairs * k).astype(
        np.uint64)
    if k == 1:
        u1 = 1.0 - (w[0::2] >> 8) * 2.0 ** -24
        u2 = (w[1::2] >> 8) * 2.0 ** -24
    else:
        u1 = 1.0 - ((w[0::4] >> 5) * 2 ** 26 + (w[1::4] >> 6)) * 2.0 ** -53
        u2 = ((w[2::4] >> 5) * 2 ** 26 + (w[3::4] >> 6)) * 2.0 ** -53
    r = np.sqrt(-2 * np.log(u1))
    want = np.stack([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)], 1).reshape(-1)
    got = philox.normal(9, offset * k, n, dtype)
    np.testing.assert_allclose(got, want[offset % 2:offset % 2 + n], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normals_same_on_any_thread_count_and_normal_by_ks(dtype):
    import tensorlib as tl
    from scipy import stats
    before = tl.get_num_threads()
    try:
        draws = []
        for threads in (1, 2):
            tl.set_num_threads(threads)
            draws.append(philox.normal(2024, 3, 10 ** 6 + 3, dtype))
    finally:
        tl.set_num_threads(before)
    np.testing.assert_array_equal(draws[0], draws[1])
    z = draws[0].astype(np.float64)
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert abs(z.mean()) < 3e-3 and abs(z.var() - 1) < 3e-3
