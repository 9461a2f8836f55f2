"""Philox4x32-10, written from the stream specification in tensorlib's docs (the docstring
of tensorlib_cpu.philox): word w = philox(counter=(w//4 lo, hi, 0, 0), key=seed)[w % 4];
float32 takes 1 word per number, float64 2; normals are Box-Muller on aligned word pairs."""
import numpy as np

M32 = 0xFFFFFFFF
MULT = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
WEYL = (0x9E3779B9, 0xBB67AE85)


def words(seed, start, count):
    """uint32 words start .. start+count-1 of the stream of `seed` (indices mod 2**64)."""
    start &= (1 << 64) - 1
    first, lane = start >> 2, start & 3
    nblocks = (lane + count + 3) >> 2
    block = (np.uint64(first) + np.arange(nblocks, dtype=np.uint64)) & np.uint64((1 << 62) - 1)
    x = [block & np.uint64(M32), block >> np.uint64(32), np.zeros_like(block), np.zeros_like(block)]
    k0, k1 = seed & M32, (seed >> 32) & M32
    for _ in range(10):
        hi_lo0, hi_lo1 = x[0] * MULT[0], x[2] * MULT[1]     # exact: both factors < 2**32
        x = [(hi_lo1 >> np.uint64(32)) ^ x[1] ^ np.uint64(k0), hi_lo1 & np.uint64(M32),
             (hi_lo0 >> np.uint64(32)) ^ x[3] ^ np.uint64(k1), hi_lo0 & np.uint64(M32)]
        k0, k1 = (k0 + WEYL[0]) & M32, (k1 + WEYL[1]) & M32
    return np.stack(x, axis=1).astype(np.uint32).reshape(-1)[lane:lane + count]


def _unit(w, double, one_minus=False, bits=24):
    """Exact uniforms from words w[..., 0] (`bits` of them: the target dtype's significand,
    so float16 never rounds up to 1.0) or w[..., :2] (float64: 53 bits)."""
    if double:
        m = (w[..., 0] >> 5).astype(np.uint64) * (1 << 26) + (w[..., 1] >> 6)
        bits, ftype = 53, np.float64
    else:
        m, ftype = (w[..., 0] >> (32 - bits)).astype(np.uint64), np.float32
    if one_minus:
        m = np.uint64(1 << bits) - m
    return m.astype(ftype) * ftype(2.0 ** -bits)


def uniform(seed, offset, n, dtype):
    k = 2 if np.dtype(dtype).itemsize == 8 else 1
    bits = {2: 11 if np.dtype(dtype) == np.float16 else 8, 4: 24}.get(np.dtype(dtype).itemsize, 53)
    return _unit(words(seed, offset, k * n).reshape(n, k), k == 2, bits=bits).astype(dtype)


def normal(seed, offset, n, dtype):
    k = 2 if np.dtype(dtype).itemsize == 8 else 1
    if n == 0:
        return np.zeros(0, dtype)
    g = np.uint64(offset & ((1 << 64) - 1)) + np.uint64(k) * np.arange(n, dtype=np.uint64)
    pair = g - g % np.uint64(2 * k)                       # the pair's first word
    rel = (pair - pair[0]).astype(np.int64)               # wraps mod 2**64 like the stream
    w = words(seed, int(pair[0]), int(rel[-1]) + 2 * k)
    w1 = w[rel[:, None] + np.arange(k)]
    w2 = w[rel[:, None] + k + np.arange(k)]
    ftype = np.float64 if k == 2 else np.float32
    r = np.sqrt(ftype(-2.0) * np.log(_unit(w1, k == 2, one_minus=True)))
    t = ftype(2.0 * np.pi) * _unit(w2, k == 2)
    return np.where(g % np.uint64(2 * k) < k, r * np.cos(t), r * np.sin(t)).astype(dtype)
